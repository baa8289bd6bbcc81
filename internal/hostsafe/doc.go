// Package hostsafe holds what meshbench, running as root on a host other
// users share, checks before it trusts a file or a process: that a binary
// it is about to run could not have been placed or changed by another
// user, and that a process is still the one it recorded.
package hostsafe
