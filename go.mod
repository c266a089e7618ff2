module github.com/seed-e5e476df/logbook

go 1.26
