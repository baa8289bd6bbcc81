package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/topology"
)

// Supervise brings up the lab a cluster file describes, deploys its
// workload, reports through ready, and then keeps the pods running until
// ctx ends, when it brings the lab down. It is the body of the detached
// `meshbench lab supervise` process that Start launches.
func Supervise(ctx context.Context, f ClusterFile, o Options, ready func(error)) error {
	o = o.withFile(f)
	o.Supervisor = true
	p := newPlatform(o)
	err := up(ctx, p, f)
	ready(err)
	if err == nil {
		<-ctx.Done()
	}
	dctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return errors.Join(err, p.Down(dctx))
}

func up(ctx context.Context, p *labPlatform, f ClusterFile) error {
	if err := p.Up(ctx, infra.ClusterSpec{Nodes: f.Nodes}); err != nil {
		return err
	}
	if f.Workload == nil {
		return nil
	}
	g, err := topology.Load(f.Workload.Graph)
	if err != nil {
		return err
	}
	return p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: f.Workload.Namespaces, Replicas: f.Workload.Replicas})
}

// withFile takes the lab's name and prefix from a cluster file, unless
// the options set them.
func (o Options) withFile(f ClusterFile) Options {
	if o.Name == "" {
		o.Name = f.Name
	}
	if o.Prefix == "" {
		o.Prefix = f.Prefix
	}
	if o.Name == "" {
		o.Name = "mb"
	}
	return o
}

// Start launches a detached `meshbench lab supervise` for a cluster file
// and returns once the lab is up and its workload ready, or with the
// supervisor's error. The supervisor outlives this process; `meshbench lab
// down` stops it.
func Start(ctx context.Context, path string, o Options) error {
	f, err := LoadClusterFile(path)
	if err != nil {
		return err
	}
	o = o.withFile(f)
	if os.Geteuid() != 0 {
		return errors.New("the lab needs root (network namespaces, iptables, cgroups): run meshbench as root")
	}
	bin, err := o.bin()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cluster.DefaultStateRoot, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", cluster.DefaultStateRoot, err)
	}
	logPath := cluster.SupervisorLog(filepath.Join(cluster.DefaultStateRoot, o.Name))
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("supervisor log: %w", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	args := []string{"lab", "supervise", "-f", abs, "--name", o.Name, "--ready-fd", "3"}
	if o.Prefix != "" {
		args = append(args, "--prefix", o.Prefix)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("start the lab supervisor: %w", err)
	}
	msg := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		msg <- strings.TrimSpace(line)
	}()
	select {
	case <-ctx.Done():
		// The supervisor brings down whatever it brought up.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		return ctx.Err()
	case m := <-msg:
		if m == readyOK {
			return cmd.Process.Release()
		}
		werr := cmd.Wait()
		if m == "" {
			return fmt.Errorf("the lab supervisor exited (%v) without bringing the lab up; see %s", werr, logPath)
		}
		return errors.New(strings.TrimPrefix(m, "error: "))
	}
}

// readyOK is what a supervisor writes when its lab is up.
const readyOK = "ok"

// ReadyWriter returns the ready callback a supervisor reports through:
// one line on w, which it then closes.
func ReadyWriter(w io.WriteCloser) func(error) {
	return func(err error) {
		if err != nil {
			fmt.Fprintf(w, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		} else {
			fmt.Fprintln(w, readyOK)
		}
		w.Close()
	}
}
