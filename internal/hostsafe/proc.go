package hostsafe

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// ProcStart is a running process's start time in clock ticks since boot
// (field 22 of /proc/PID/stat); a zombie is an error.
func ProcStart(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, errors.New("no pid")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; fields count from after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("bad stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, errors.New("bad stat")
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, errors.New("process exited")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Alive reports whether the process pid still runs and is the one that
// started at start (ProcStart): a recycled pid is another process.
func Alive(pid int, start uint64) bool {
	s, err := ProcStart(pid)
	return err == nil && s == start
}
