module tally-ipam.dev/e2e/kind/forward

go 1.24
