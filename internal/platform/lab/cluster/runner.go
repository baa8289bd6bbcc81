package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Cmd is one external command, run inside a network namespace of the lab
// (or the caller's own when Netns is empty).
type Cmd struct {
	Netns string
	Args  []string
	Stdin []byte
}

func (c Cmd) String() string {
	s := strings.Join(c.Args, " ")
	if c.Netns != "" {
		s = "[" + c.Netns + "] " + s
	}
	return s
}

// Runner runs external commands. The real one is ExecRunner; tests record
// commands with a fake.
type Runner interface {
	// Run runs the command and returns its combined output; a failure is
	// a *CmdError carrying that output.
	Run(ctx context.Context, c Cmd) ([]byte, error)
}

// CmdError is a failed external command with what it printed.
type CmdError struct {
	Cmd    Cmd
	Output string
	Err    error
}

func (e *CmdError) Error() string {
	out := strings.TrimSpace(e.Output)
	if out == "" {
		return fmt.Sprintf("%s: %v", e.Cmd, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Cmd, e.Err, out)
}

func (e *CmdError) Unwrap() error { return e.Err }

// ExecRunner runs commands with os/exec, forking them from a thread that
// has entered the command's network namespace.
type ExecRunner struct{}

// Run implements Runner.
func (ExecRunner) Run(ctx context.Context, c Cmd) ([]byte, error) {
	if len(c.Args) == 0 {
		return nil, fmt.Errorf("run: empty command")
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	err := startIn(c.Netns, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return out.Bytes(), &CmdError{Cmd: c, Output: out.String(), Err: err}
	}
	return out.Bytes(), nil
}
