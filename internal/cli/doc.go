// Package cli turns meshbench's command line into calls on the library
// packages. Each subcommand lives in its own file and only maps flags to
// options; the work is done elsewhere.
package cli
