package auth

// What the external tests (package auth_test, which link the postgres
// token table of package runtime/service/pgtokens) share with the internal ones.
var (
	OpenTestStore        = openStore
	RevocationOnTwoHosts = testRevocationOnTwoHosts
)
