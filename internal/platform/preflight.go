package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"golang.org/x/sys/unix"
)

// Finding is one preflight check's outcome: what was checked, what was
// found and, when it is not OK, the one thing to do about it. Each
// provider produces its own; `meshbench doctor` prints them and `meshbench
// run` refuses to start, before it creates anything, when one fails.
type Finding struct {
	Check string `json:"check"`
	OK    bool   `json:"ok"`
	// Advisory marks a check whose failure is a warning: printed, but no
	// reason to refuse a run (a moment's sample of a condition that comes
	// and goes, which the run watches for itself).
	Advisory bool   `json:"advisory,omitempty"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix,omitempty"`
}

// Needs is what a study asks of a platform, for its preflight checks.
type Needs struct {
	Nodes []infra.NodeSpec
	// Profiles are the mesh profiles the study installs.
	Profiles []string
	// ProxyVersions are the proxy releases the study's meshes name
	// (proxy_version), each once.
	ProxyVersions []string
	// ResultsDir is where the results will go; it need not exist yet.
	ResultsDir string
	// SharedHost accepts other labs' processes on the study's CPUs, and a
	// hypervisor that takes a share of them, for development hosts where
	// measurements are not meant to be clean.
	SharedHost bool
	// Istiod says a mesh takes its configuration from istiod
	// (control_plane: istiod), which runs a local control plane with it.
	Istiod bool
}

// Meshes says whether any of the profiles installs a mesh.
func (n Needs) Meshes() bool {
	for _, p := range n.Profiles {
		if p != "" && p != "baseline" {
			return true
		}
	}
	return false
}

// Problems returns nil when every finding is OK or advisory, and
// otherwise an error with one line per failed finding and its fix.
func Problems(fs []Finding) error {
	var lines []string
	for _, f := range fs {
		if !f.OK && !f.Advisory {
			lines = append(lines, f.Line())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New("preflight failed (see meshbench doctor):\n  " + strings.Join(lines, "\n  "))
}

// Line is the finding on one line: "check: detail", and its fix when it
// failed.
func (f Finding) Line() string {
	s := f.Check + ": " + f.Detail
	if !f.OK && f.Fix != "" {
		s += "; fix: " + f.Fix
	}
	return s
}

// Warnings returns the advisory findings that failed.
func Warnings(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if !f.OK && f.Advisory {
			out = append(out, f)
		}
	}
	return out
}

// MinFreeDisk is the free space a run wants where its results go: a cell
// file holds histograms and resource series of a few megabytes, and pod
// logs are kept with the results.
const MinFreeDisk = 512 << 20

// DiskFinding checks the free space of the file system that will hold the
// results directory dir (its nearest existing parent, as the directory
// may not exist yet).
func DiskFinding(dir string, need uint64) Finding {
	return SpaceFinding("disk", dir, need, "give a results directory on a mounted file system with --out",
		"free space there, or put the results elsewhere with --out")
}

// SpaceFinding checks, under the check's name, the free space of the file
// system that will hold dir (its nearest existing parent); where names
// the fix when dir cannot be used, free the fix when it lacks space.
func SpaceFinding(check, dir string, need uint64, where, free string) Finding {
	f := Finding{Check: check}
	p, err := filepath.Abs(dir)
	if err != nil {
		f.Detail, f.Fix = err.Error(), where
		return f
	}
	for {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		p = filepath.Dir(p)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		f.Detail, f.Fix = fmt.Sprintf("statfs %s: %v", p, err), where
		return f
	}
	avail := st.Bavail * uint64(st.Bsize)
	f.Detail = fmt.Sprintf("%d MiB free under %s", avail>>20, p)
	if avail < need {
		f.Detail += fmt.Sprintf(", want %d MiB", need>>20)
		f.Fix = free
		return f
	}
	f.OK = true
	return f
}
