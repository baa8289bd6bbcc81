// Package app is meshbench's test service: one service of a topology graph,
// serving HTTP/1.1 and h2c, running its script of downstream calls and
// answering with the JSON call tree.
package app
