package istiod

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/localkube"
)

// ProxyVersion is the Istio version proxies report to istiod (the VERSION
// of the istio.io/istio module istiod is built from): istiod shapes the
// configuration it sends to the proxy's version.
const ProxyVersion = "1.31.0"

// Build is a built istiod: its binary, Istio's CRDs, the Gateway API's
// CRDs of the version Istio requires, and the module version it was built
// from.
type Build struct {
	Binary      string
	CRDs        string
	GatewayCRDs string
	Version     string
}

// Find checks the build in dir (see localkube.IstiodDir) and names the fix
// when any of it is missing.
func Find(dir string) (Build, error) {
	b := Build{Binary: filepath.Join(dir, "bin", "pilot-discovery"), CRDs: filepath.Join(dir, "crds.yaml"),
		GatewayCRDs: filepath.Join(dir, "gateway-crds.yaml")}
	v, err := os.ReadFile(filepath.Join(dir, "version"))
	st, serr := os.Stat(b.Binary)
	_, cerr := os.Stat(b.CRDs)
	_, gerr := os.Stat(b.GatewayCRDs)
	if err != nil || serr != nil || st.Mode()&0o111 == 0 || cerr != nil || gerr != nil {
		return b, fmt.Errorf("istiod is not built in %s; build it with scripts/istiod-build.sh (or set %s)", dir, localkube.IstiodDirEnv)
	}
	// It runs as root's child: one another user could have changed is refused.
	if _, err := hostsafe.Executable(b.Binary); err != nil {
		return b, fmt.Errorf("istiod in %s: %w; %s, or build it again with scripts/istiod-build.sh", dir, err, hostsafe.Fix)
	}
	b.Version = string(bytes.TrimSpace(v))
	return b, nil
}
