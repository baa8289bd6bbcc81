// Package confined creates, writes and reads files beneath a directory
// without following a symbolic link or leaving the directory: a results
// directory may come from someone else, and meshbench runs as root, so a
// link planted in it (logs/run.log -> /etc/passwd) must be refused, not
// written through.
package confined
