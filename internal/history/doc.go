// Package history keeps every run's figures in a results history (SQLite
// or PostgreSQL) and finds change points in the series comparable runs
// make: E-divisive means with a permutation test, each change with its
// size, its interval and what changed in provenance across it.
package history
