package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// protocolTools are the peers and the server of the protocols part: h2load
// (nghttp2-client) for HTTP/2, ghz for gRPC against grpcref, the minimal
// grpc-go server (bench/grpcref).
var protocolTools = []string{"h2load", "ghz", "grpcref"}

// appProto describes the test service's gRPC method for ghz, which parses
// it itself: no protoc.
const appProto = `syntax = "proto3";
package meshbench;
import "google/protobuf/wrappers.proto";
service App { rpc Call(google.protobuf.BytesValue) returns (google.protobuf.BytesValue); }
`

// protoRun is one protocol's contest: meshbench's flags and a peer's.
type protoRun struct {
	protocol, peer, url string
	meshbench           []string
	peerArgs            func(conns int, d time.Duration) []string
	peerCount           func(p proc) (done, failed int64, err error)
	// target is the highest meshbench/peer ratio that passes; 0 prints
	// the ratio without a verdict.
	target float64
}

// protocolsBench measures client CPU per request, closed loop, one
// request in flight per connection, for HTTP/2 against h2load (nginx's
// h2c port) and gRPC against ghz (grpcref), each pair in the same run,
// rounds alternating their order.
func protocolsBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	fmt.Fprintf(w, "== Client CPU per request by protocol: closed loop, one request in flight per connection, %s per run; each tool's median of %d rounds, each ratio the median of the rounds' ratios\n",
		cfg.duration, cfg.repeat)
	tmp, err := os.MkdirTemp("", "loadbench-proto-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	protoFile := filepath.Join(tmp, "app.proto")
	if err := os.WriteFile(protoFile, []byte(appProto), 0o644); err != nil {
		return err
	}
	runs := []protoRun{{
		protocol: "HTTP/2 (h2c)", peer: "h2load", url: srv.h2url, target: 1.0,
		meshbench: []string{"--http2"},
		peerArgs: func(conns int, d time.Duration) []string {
			return []string{"-c", fmt.Sprint(conns), "-m", "1", "-t", "1", "-D", fmt.Sprint(int(d.Seconds())), srv.h2url}
		},
		peerCount: func(p proc) (int64, int64, error) {
			done, err := match(p.stdout, `(\d+) done`)
			failed, _ := match(p.stdout, `(\d+) failed`)
			errored, _ := match(p.stdout, `(\d+) errored`)
			return done, failed + errored, err
		},
	}}
	if ref := cfg.tools["grpcref"]; ref != "" {
		addr, stop, err := startGRPCRef(ctx, ref)
		if err != nil {
			return err
		}
		defer stop()
		runs = append(runs, protoRun{
			protocol: "gRPC unary", peer: "ghz", url: "http://" + addr,
			meshbench: []string{"--grpc"},
			peerArgs: func(conns int, d time.Duration) []string {
				return []string{"--insecure", "--proto", protoFile, "--call", "meshbench.App/Call", "-d", `""`, // a BytesValue is a base64 string in JSON
					"-c", fmt.Sprint(conns), "--connections", fmt.Sprint(conns), "-z", secs(d), "-O", "json", addr}
			},
			peerCount: func(p proc) (int64, int64, error) {
				var r struct {
					Count  int64            `json:"count"`
					Status map[string]int64 `json:"statusCodeDistribution"`
				}
				if err := json.Unmarshal(p.stdout, &r); err != nil {
					return 0, 0, err
				}
				return r.Count, r.Count - r.Status["OK"], nil
			},
		})
	} else {
		fmt.Fprintln(w, "  gRPC left out: no -grpcref server")
	}
	for _, pr := range runs {
		for _, conns := range cfg.conns {
			mineRounds, peerRounds := protoPair(ctx, cfg, pr, conns)
			mine, peer := median(mineRounds), median(peerRounds)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "protocol\ttool\tconns\trequests\tfailed\treq/s\tcpu µs/req\trange\t")
			for _, r := range []cpuRow{mine, peer} {
				if r.note != "" {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t\t\t\t\t\n", pr.protocol, r.name, conns, r.note)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.2f\t%s\t\n", pr.protocol, r.name, conns, r.done, r.failed,
					float64(r.done)/cfg.duration.Seconds(), r.usPerReq, r.spread)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			q, ok := pairedRatio(mineRounds, peerRounds)
			if !ok {
				verdict(w, false, "%s %d conns: no ratio (%s%s)", pr.protocol, conns, mine.note, peer.note)
				continue
			}
			if pr.target == 0 {
				fmt.Fprintf(w, "  %s %d conns: meshbench's CPU per request is %s %s's\n", pr.protocol, conns, q, pr.peer)
				continue
			}
			verdict(w, q.median <= pr.target, "%s %d conns: meshbench's CPU per request is %s %s's (target ≤ %.2f)",
				pr.protocol, conns, q, pr.peer, pr.target)
		}
	}
	return nil
}

// protoPair runs meshbench and the peer cfg.repeat times each, alternating
// which goes first, and returns each one's rounds.
func protoPair(ctx context.Context, cfg config, pr protoRun, conns int) (mine, peer []cpuRow) {
	for round := range cfg.repeat {
		steps := []func(){
			func() {
				args := append([]string{"load", "-q", "-c", fmt.Sprint(conns), "-d", secs(cfg.duration), "--output", "json"}, pr.meshbench...)
				mine = append(mine, pinnedCPU(ctx, "meshbench", cfg.tools["meshbench"], append(args, pr.url), func(p proc) (int64, int64, error) {
					var r meshbenchReport
					err := json.Unmarshal(p.stdout, &r)
					return r.Requests, r.Errors, err
				}))
			},
			func() {
				peer = append(peer, pinnedCPU(ctx, pr.peer, cfg.tools[pr.peer], pr.peerArgs(conns, cfg.duration), pr.peerCount))
			},
		}
		if round%2 == 1 {
			slices.Reverse(steps)
		}
		for _, s := range steps {
			s()
		}
	}
	return mine, peer
}

// pinnedCPU runs one tool pinned and reads its CPU per completed request.
func pinnedCPU(ctx context.Context, name, bin string, args []string, count func(proc) (int64, int64, error)) cpuRow {
	if bin == "" {
		return cpuRow{name: name, note: "not installed"}
	}
	p, err := runPinned(ctx, strings.NewReader(""), nil, bin, args...)
	if err != nil {
		return cpuRow{name: name, note: "failed: " + firstLine(err)}
	}
	done, failed, err := count(p)
	if err != nil || done == 0 {
		return cpuRow{name: name, note: fmt.Sprintf("unreadable output: %v", err)}
	}
	return cpuRow{name: name, done: done, failed: failed, cpuSeconds: p.cpu.Seconds(),
		usPerReq: float64(p.cpu.Microseconds()) / float64(done)}
}

// startGRPCRef starts the reference gRPC server on the server CPU and
// returns its address.
func startGRPCRef(ctx context.Context, bin string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, "nice", "-n", fmt.Sprint(niceness), "taskset", "-c", fmt.Sprint(serverCPU), bin, "-listen", "127.0.0.1:0", "-size", "251")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start grpcref: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("grpcref did not say where it listens: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}
