package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshbench/meshbench/internal/report"
	"github.com/meshbench/meshbench/internal/study"
)

// Exit codes. exitCodes below is their one description: --help and the
// README's "Exit codes" table are checked against it.
const (
	ExitOK         = 0
	ExitFailure    = 1
	ExitUsage      = 2 // a command line meshbench does not accept
	ExitRegression = 3 // a comparison found a measurable regression, or history check a change point that is one
	ExitThresholds = 4 // a study's thresholds were not met
	exitInterrupt  = 130
)

// exitCodes says what each exit code means, in the README's words.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{ExitOK, "success"},
	{ExitFailure, "failure: a check failed, a run or report could not complete, a cell of the run failed"},
	{ExitUsage, "usage: an unknown command or flag, a wrong argument, an `-o` the command does not offer, an unknown built-in study, a file or directory that does not exist"},
	{ExitRegression, "a regression: a comparison found a measurable one (`compare --fail-on-regression`), or the newest runs introduced a change point that made a primary metric (p50, p99, data-plane CPU per request) worse by 5% or more (`history check`)"},
	{ExitThresholds, "thresholds: a study's thresholds were not met (each is printed; one the run could not measure counts as not met); `run` exits 1 instead when a cell failed as well"},
	{exitInterrupt, "interrupted (Ctrl-C); every finished cell is kept"},
}

// exitCodesHelp is exitCodes as --help shows it.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "\n  %3d  %s", e.code, strings.ReplaceAll(e.meaning, "`", ""))
	}
	return b.String()
}

// exitCode is the code Main returns for err.
func exitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errInterrupted):
		return exitInterrupt
	case isUsage(err):
		return ExitUsage
	case errors.Is(err, report.ErrRegression):
		return ExitRegression
	case errors.Is(err, report.ErrThresholds):
		return ExitThresholds
	}
	return ExitFailure
}

// errInterrupted stands for a cancelled context in exitCode.
var errInterrupted = errors.New("interrupted")

// usageError is a command line meshbench does not accept: an unknown
// command or flag, a wrong number of arguments, a flag value out of range.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// markUsage makes cobra's flag and argument errors usage errors, for
// every command under root.
func markUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &usageError{err.Error()}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// isUsage reports whether err is a usage error: one of ours, an unknown
// built-in study, or cobra's unknown command, recognised by its wording.
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u) || errors.Is(err, study.ErrUnknownPreset) ||
		strings.HasPrefix(err.Error(), "unknown command ")
}

// existing refuses, as a usage error, a file or directory the command
// line names that does not exist, before the command does anything; what
// names the flag or argument.
func existing(what, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return usageErrorf("%s %s: no such file or directory", what, path)
	}
	return nil
}

// existingArgs is existing for each of args.
func existingArgs(what string, args []string) error {
	for _, a := range args {
		if err := existing(what, a); err != nil {
			return err
		}
	}
	return nil
}

// outputValue is an -o flag: it accepts only the formats its command
// offers, so a wrong -o is refused while the flags are parsed, before
// the command runs, as the same usage error everywhere.
type outputValue struct {
	p       *string
	offered []string
}

func (o *outputValue) String() string { return *o.p }
func (o *outputValue) Type() string   { return "format" }
func (o *outputValue) Set(v string) error {
	for _, f := range o.offered {
		if v == f {
			*o.p = v
			return nil
		}
	}
	return fmt.Errorf("want %s", strings.Join(o.offered, ", "))
}

// outputFlag registers -o/--output on fs, defaulting to the first of
// offered.
func outputFlag(fs *pflag.FlagSet, p *string, usage string, offered ...string) {
	*p = offered[0]
	fs.VarP(&outputValue{p: p, offered: offered}, "output", "o", usage)
}
