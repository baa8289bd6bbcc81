package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	strict := flag.Bool("strict", false, "fail when any integration test skipped")
	flag.Parse()
	s := newSummary()
	if err := s.read(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := s.report(os.Stdout, *strict); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}
