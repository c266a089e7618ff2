// Package auth decides who a request to logbook serve comes from and what
// it may do: the credentials (scoped bearer tokens, stored as hashes, and
// JWTs verified against configured keys), the roles they carry and the
// tenant they are scoped to (docs/operations.md, "Tenants, roles and
// tokens").
//
// The server asks a Verifier, once per request; `logbook token` changes a
// Store. A Verifier accepts three kinds of bearer token:
//
//   - a token of the Store: "lb_" and the unpadded base64url of 32 random
//     bytes, made by Store.Create and shown once; the store keeps only its
//     SHA-256, with its name, tenant, role and creation time;
//   - a JWT signed with RS256/384/512, PS256/384/512, ES256/384/512 or
//     EdDSA by a key of the auth.jwt block's key file (never "none", never
//     HMAC), whose iss, aud, exp, nbf and iat hold, whose sub names the
//     caller and whose tenant and role claims scope it;
//   - the single token of serve --token-file, an operator of every tenant.
//
// A scope is a tenant name and a role, or AllTenants with RoleOperator
// (CheckScope): an operator acts on every tenant, every other role on one.
//
// # The token file
//
// Without PostgreSQL the store is one file, <data_dir>/tokens unless
// auth.tokens_file names another, mode 0600 (a file others may read or
// write is refused with CONFIG_INVALID), holding one JSON document:
//
//	{
//	  "version": 1,
//	  "tokens": [
//	    {"name": "ci", "tenant": "acme", "role": "write",
//	     "sha256": "<64 lowercase hex digits: SHA-256 of the token>",
//	     "created": "2026-12-07T19:53:28.123456Z"}
//	  ]
//	}
//
// Names are unique and match [a-z0-9][a-z0-9._-]{0,63}; tenant and role
// form a valid scope; unknown members, another version or a second
// document are CONFIG_INVALID naming the file and the token. Writers
// (create, revoke) take an exclusive flock on <file>.lock, read the file,
// and replace it whole: a temporary file beside it, fsync, rename, fsync
// of the directory, so readers see the old file or the new one.
//
// # The token table
//
// When the primary persistence is postgres (and tokens_file is unset) the
// tokens live in its schema, created on first use:
//
//	auth_tokens(name text PRIMARY KEY, sha256 bytea UNIQUE, tenant text,
//	            role text, created_at timestamptz)
//	auth_tokens_state(singleton boolean PRIMARY KEY, changes bigint)
//
// Every create and revoke bumps changes in its own transaction.
//
// # Revocation
//
// A Verifier polls every PollInterval (250 ms): the token file's inode,
// size and modification time, or the changes counter, and re-reads the
// tokens when they moved. A revoked token is therefore refused by every
// host within a second. A token store that becomes invalid is treated as
// empty until it is valid again; a key file that becomes invalid keeps
// the keys read before (both logged). Verified JWTs are remembered by the
// SHA-256 of the token until their exp, at most a minute, and forgotten
// when the keys change.
package auth
