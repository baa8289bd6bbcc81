package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/image"
)

func newImageCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build meshbench's container image from this binary, with no container runtime",
	}
	cmd.AddCommand(newImagePushCmd(s))
	return cmd
}

func newImagePushCmd(s Streams) *cobra.Command {
	var tarballPath, binary string
	cmd := &cobra.Command{
		Use:   "push REF",
		Short: "Build meshbench's image from this binary and push it to REF, or write it as a tarball",
		Long: `Build the image every app, load and probe pod of a Kubernetes study runs:
one layer holding this meshbench binary (static; build it with
CGO_ENABLED=0) as /meshbench, run as the non-root user 65532, for the
binary's own architecture (--binary packs another, such as one built with
GOARCH=arm64 for an arm64 cluster), and push it to
REF with the credentials 'docker login' or a credential helper keeps. It
prints the image's reference by digest, for platform.kubernetes.image.
With --tarball it writes the image tagged REF to a file instead, which
'docker load', 'kind load image-archive' and 'ctr images import' read.`,
		Example: `  CGO_ENABLED=0 go build -o meshbench ./cmd/meshbench
  ./meshbench image push ghcr.io/you/meshbench:v0.1.0
  ./meshbench image push meshbench:dev --tarball meshbench.tar && kind load image-archive meshbench.tar`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if binary == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find this binary: %w (name it with --binary)", err)
				}
				binary = exe
			}
			img, err := image.Build(binary)
			if err != nil {
				return err
			}
			if tarballPath != "" {
				if err := image.WriteTarball(tarballPath, args[0], img); err != nil {
					return err
				}
				_, err = fmt.Fprintf(s.Out, "%s: %s\n", tarballPath, args[0])
				return err
			}
			ref, err := image.Push(args[0], img)
			if err != nil {
				return errors.Join(err, errors.New("log in to the registry first (docker login, or a credential helper), or write a --tarball"))
			}
			_, err = fmt.Fprintln(s.Out, ref)
			return err
		},
	}
	cmd.Flags().StringVar(&tarballPath, "tarball", "", "write the image to this file instead of pushing it")
	cmd.Flags().StringVar(&binary, "binary", "", "the meshbench binary to put in the image (default this one)")
	return cmd
}
