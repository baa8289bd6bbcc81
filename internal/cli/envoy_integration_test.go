package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/testenv"
)

// Issue 44: with Envoy installed by scripts/setup.sh (.venv beside the
// bin/ that holds meshbench), doctor finds it wherever it is started, from
// /tmp too, with MESHBENCH_ENVOY unset; it said to run scripts/setup.sh.
func TestIntegrationDoctorFindsTheInstalledEnvoyAnywhere(t *testing.T) {
	testenv.Integration(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	venv := filepath.Join(filepath.Dir(filepath.Dir(bin)), ".venv", "bin", "envoy")
	_, err := os.Stat(venv)
	testenv.Need(t, err == nil, "Envoy installed beside %s by scripts/setup.sh: %v", bin, err)
	cmd := exec.Command(bin, "doctor", "--shared-host")
	cmd.Dir = os.TempDir()
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "MESHBENCH_ENVOY=") })
	out, _ := cmd.CombinedOutput() // other checks may fail on a busy host
	line := regexp.MustCompile(`(?m)^.*envoy: .*$`).Find(out)
	if !regexp.MustCompile(`^ok +envoy: Envoy 1\.40\.\d+ at `).Match(line) {
		t.Errorf("doctor from %s without %s: envoy finding %q; want Envoy found beside %s\n%s", cmd.Dir, "MESHBENCH_ENVOY", line, bin, out)
	}
}
