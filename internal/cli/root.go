package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

// Streams are the standard streams a command reads and writes. Results go to
// Out and status to ErrOut, so that piping and -q both work.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Version and Commit are the meshbench version and the commit it was
// built from, set at build time with -ldflags (the Makefile does); Commit
// falls back to the Go toolchain's VCS stamp.
var (
	Version = "dev"
	Commit  = ""
)

// globals are the flags every subcommand shares.
type globals struct {
	verbose bool
	quiet   bool
}

// logger returns the slog logger the flags ask for: warnings by default,
// debug with --verbose, errors only with --quiet.
func (g *globals) logger(s Streams) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case g.verbose:
		level = slog.LevelDebug
	case g.quiet:
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(s.ErrOut, &slog.HandlerOptions{Level: level}))
}

// bind registers the global flags on the root command.
func (g *globals) bind(root *cobra.Command) {
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log more, including debug detail")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "log errors only")
}

// Run executes meshbench with the given arguments and returns its error.
func Run(ctx context.Context, s Streams, args []string) error {
	g := &globals{}
	root := &cobra.Command{
		Use:           "meshbench",
		Short:         "Measure what a service mesh costs: latency, throughput, CPU, memory and money",
		Long:          "Measure what a service mesh costs: latency, throughput, CPU, memory and money.\n\n" + exitCodesHelp(),
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	g.bind(root)
	// Every subcommand, registered here and nowhere else.
	root.AddCommand(
		newLoadCmd(s, g),
		newAppCmd(s, g),
		newLabCmd(s, g),
		newKubernetesCmd(s, g),
		newImageCmd(s),
		newDoctorCmd(s, g),
		newRunCmd(s, g),
		newStudiesCmd(s, g),
		newReportCmd(s, g),
		newCostCmd(s, g),
		newProfileCmd(s, g),
		newPredictCmd(s, g),
		newXDSLoadCmd(s, g),
		newCompareCmd(s, g),
		newHistoryCmd(s, g),
		newVersionCmd(s),
	)
	if labOnly {
		root.Long += "\n\n" + labOnlyNote
	}
	markUsage(root)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// Main runs meshbench and turns its error into one message and an exit code.
func Main(ctx context.Context, s Streams, args []string) int {
	err := Run(ctx, s, args)
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(s.ErrOut, "meshbench: interrupted")
		return exitCode(errInterrupted)
	}
	fmt.Fprintf(s.ErrOut, "meshbench: %v\n", err)
	code := exitCode(err)
	if code == ExitUsage {
		fmt.Fprintln(s.ErrOut, "Run 'meshbench --help' or 'meshbench COMMAND --help' for usage.")
	}
	return code
}
