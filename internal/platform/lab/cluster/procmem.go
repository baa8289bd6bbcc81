package cluster

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcMemory is a process's resident and proportional set sizes in bytes.
// PSS divides shared pages among their users, so summing it over many
// proxies running one binary does not count the binary many times.
type ProcMemory struct {
	RSS int64 `json:"rss_bytes"`
	PSS int64 `json:"pss_bytes"`
}

// ProcessMemory reads /proc/PID/smaps_rollup.
func ProcessMemory(pid int) (ProcMemory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return ProcMemory{}, fmt.Errorf("process memory: %w", err)
	}
	defer f.Close()
	var m ProcMemory
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v) // "1234 kB"
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "Rss":
			m.RSS = kb * 1024
		case "Pss":
			m.PSS = kb * 1024
		}
	}
	return m, s.Err()
}

// ContainerMemory sums RSS and PSS over a container's processes.
func (l *Lab) ContainerMemory(namespace, pod, name string) (ProcMemory, error) {
	_, c, err := l.container(namespace, pod, name)
	if err != nil {
		return ProcMemory{}, err
	}
	var sum ProcMemory
	for _, pid := range l.cg.pids(c.rel) {
		m, err := ProcessMemory(pid)
		if err != nil {
			continue // exited meanwhile
		}
		sum.RSS += m.RSS
		sum.PSS += m.PSS
	}
	return sum, nil
}
