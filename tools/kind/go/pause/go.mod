// The Pod sandbox ("pause") process of the kind node image.
module github.com/tally-ipam/tally/kind/pause

go 1.24.0
