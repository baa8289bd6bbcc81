package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Readiness probing, as the kubelet does it: a fast period until the first
// success, then a slower one; three failures in a row make a ready
// container unready, one success makes it ready.
const (
	probeStartPeriod = 200 * time.Millisecond
	probePeriod      = time.Second
	probeTimeout     = time.Second
	failureThreshold = 3
)

func (c *container) probe() {
	defer c.lab.wg.Done()
	netns := c.pod.netns
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return DialIn(ctx, netns, network, addr)
		},
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: probeTimeout}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", c.spec.Readiness.Port, c.spec.Readiness.Path)
	fails := 0
	for {
		c.lab.mu.Lock()
		running, ready := c.running, c.ready
		c.lab.mu.Unlock()
		period := probeStartPeriod
		if ready {
			period = probePeriod
		}
		select {
		case <-c.done:
			return
		case <-time.After(period):
		}
		if !running {
			fails = 0
			continue
		}
		ok := probeOnce(client, url)
		switch {
		case ok:
			fails = 0
		case ready:
			fails++
		}
		if ok && !ready || !ok && ready && fails >= failureThreshold {
			c.lab.mu.Lock()
			if c.running { // not a process that exited meanwhile
				c.ready = ok
				c.lab.changedLocked()
			}
			c.lab.mu.Unlock()
		}
	}
}

func probeOnce(client *http.Client, url string) bool {
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
