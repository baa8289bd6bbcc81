package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, as the README documents them.
const (
	ExitOK         = 0
	ExitFailure    = 1
	ExitUsage      = 2 // a command line meshbench does not accept
	ExitRegression = 3 // a comparison found a measurable regression, or history check a change point that is one
	exitInterrupt  = 130
)

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

// isUsage reports whether err is a usage error. Cobra reports an unknown
// command as a plain error, recognised by its wording.
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command ")
}
