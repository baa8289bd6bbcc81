package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// nginx is one nginx process, master off, pinned to serverCPU, serving a
// small static file on a loopback port from its own temporary directory.
type nginx struct {
	dir   string
	cmd   *exec.Cmd
	url   string
	h2url string // the same file over h2c
}

const nginxConf = `worker_processes 1;
master_process off;
daemon off;
pid {{dir}}/nginx.pid;
error_log {{dir}}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000000;
  keepalive_timeout 120s;
  client_body_temp_path {{dir}}/body;
  proxy_temp_path {{dir}}/proxy;
  fastcgi_temp_path {{dir}}/fastcgi;
  uwsgi_temp_path {{dir}}/uwsgi;
  scgi_temp_path {{dir}}/scgi;
  server {
    listen 127.0.0.1:{{port}} backlog=4096;
    root {{dir}}/www;
  }
  server {
    listen 127.0.0.1:{{h2port}} http2 backlog=4096; # h2c with prior knowledge
    http2_max_requests 1000000000;
    root {{dir}}/www;
  }
}
`

func startNginx(ctx context.Context) (*nginx, error) {
	dir, err := os.MkdirTemp("", "loadbench-nginx-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	h2port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", fmt.Sprint(port), "{{h2port}}", fmt.Sprint(h2port)).Replace(nginxConf)
	if err := os.MkdirAll(filepath.Join(dir, "www"), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	files := map[string]string{
		"nginx.conf":     conf,
		"www/index.html": strings.Repeat("meshbench ", 25) + "\n", // 251 bytes
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	cmd := exec.Command("nice", "-n", fmt.Sprint(niceness), "taskset", "-c", fmt.Sprint(serverCPU), "nginx", "-p", dir+"/", "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	n := &nginx{dir: dir, cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d/index.html", port), h2url: fmt.Sprintf("http://127.0.0.1:%d/index.html", h2port)}
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return n, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			n.stop()
			return nil, fmt.Errorf("nginx did not listen: %v\n%s", err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *nginx) pid() int { return n.cmd.Process.Pid }

func (n *nginx) signal(s syscall.Signal) error { return n.cmd.Process.Signal(s) }

func (n *nginx) stop() {
	_ = n.cmd.Process.Signal(syscall.SIGCONT)
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(n.dir)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
