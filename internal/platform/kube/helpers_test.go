package kube

import (
	"strconv"
	"strings"
)

func splitLines(s string) []string { return strings.Split(s, "\n") }

func itoa(i int) string { return strconv.Itoa(i) }
