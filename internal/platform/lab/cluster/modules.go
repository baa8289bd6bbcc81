package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/meshbench/meshbench/internal/platform"
)

// kernelModule is a module the lab needs on a kernel that builds the
// feature as a module, as distribution kernels do, and the option that
// builds it in.
type kernelModule struct{ name, config string }

// labModules are the links between the lab's namespaces, connection
// tracking and NAT (Services, REDIRECT), and every match and target the
// probe rules, kube-proxy's rules and the data planes use: TPROXY and the
// socket match (ambient), REDIRECT and the owner match (sidecars), marks,
// comments, statistic (Service load balancing, faults) and tcp.
var labModules = []kernelModule{
	{"veth", "CONFIG_VETH"},
	{"bridge", "CONFIG_BRIDGE"},
	{"nf_conntrack", "CONFIG_NF_CONNTRACK"},
	{"nf_nat", "CONFIG_NF_NAT"},
	{"xt_nat", "CONFIG_NETFILTER_XT_NAT"},
	{"xt_REDIRECT", "CONFIG_NETFILTER_XT_TARGET_REDIRECT"},
	{"xt_TPROXY", "CONFIG_NETFILTER_XT_TARGET_TPROXY"},
	{"xt_socket", "CONFIG_NETFILTER_XT_MATCH_SOCKET"},
	{"xt_owner", "CONFIG_NETFILTER_XT_MATCH_OWNER"},
	{"xt_mark", "CONFIG_NETFILTER_XT_MARK"},
	{"xt_comment", "CONFIG_NETFILTER_XT_MATCH_COMMENT"},
	{"xt_statistic", "CONFIG_NETFILTER_XT_MATCH_STATISTIC"},
	{"xt_tcpudp", "CONFIG_NETFILTER_XTABLES"},
}

// The iptables backends' own modules: iptables-nft runs the xt matches
// and targets inside nf_tables (nft_compat); iptables-legacy uses the
// x_tables tables.
var (
	nftModules = []kernelModule{
		{"nf_tables", "CONFIG_NF_TABLES"},
		{"nft_compat", "CONFIG_NFT_COMPAT"},
		{"nft_chain_nat", "CONFIG_NFT_NAT"},
	}
	legacyModules = []kernelModule{
		{"ip_tables", "CONFIG_IP_NF_IPTABLES"},
		{"iptable_filter", "CONFIG_IP_NF_FILTER"},
		{"iptable_nat", "CONFIG_IP_NF_NAT"},
		{"iptable_mangle", "CONFIG_IP_NF_MANGLE"},
	}
)

var errNoModprobe = errors.New("modprobe not found")

// iptablesBackend is what iptables-restore --version names: "nf_tables"
// or "legacy"; nf_tables, Debian's and Ubuntu's default, when it says
// neither (or is missing, which the iptables check reports).
func iptablesBackend(ctx context.Context) string {
	out, _ := exec.CommandContext(ctx, "iptables-restore", "--version").CombinedOutput()
	if bytes.Contains(out, []byte("(legacy)")) {
		return "legacy"
	}
	return "nf_tables"
}

// moduleFindings loads, with kmod's modprobe, each module the lab needs
// that the kernel has neither loaded nor built in, and reports one
// finding for those present and one per module that is missing, with
// its fix. A kernel without loadable modules has built in all it has,
// which the network namespace and iptables probes then test. backend is
// iptablesBackend's.
func (h host) moduleFindings(ctx context.Context, backend string) []platform.Finding {
	f := platform.Finding{Check: "modules"}
	proc, err := os.ReadFile(h.procModules)
	if err != nil {
		f.OK, f.Detail = true, fmt.Sprintf("kernel %s loads no modules (no %s): what the lab needs is built in, or missing, which the netns and iptables checks find", h.release, h.procModules)
		return []platform.Finding{f}
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(proc), "\n") {
		if name, _, ok := strings.Cut(line, " "); ok {
			have[name] = true
		}
	}
	builtin := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(h.moduleDir, "modules.builtin")); err == nil {
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			name := strings.TrimSuffix(filepath.Base(s.Text()), ".ko")
			builtin[strings.ReplaceAll(name, "-", "_")] = true
		}
	}
	want := append(append([]kernelModule{}, nftModules...), labModules...)
	if backend == "legacy" {
		want = append(append([]kernelModule{}, legacyModules...), labModules...)
	}
	var present, loaded []string
	var out []platform.Finding
	for _, m := range want {
		if have[m.name] || builtin[m.name] {
			present = append(present, m.name)
			continue
		}
		msg, err := h.modprobe(ctx, m.name)
		if err == nil {
			loaded = append(loaded, m.name)
			continue
		}
		out = append(out, h.missingModule(m, msg, err))
	}
	f.OK = true
	f.Detail = fmt.Sprintf("kernel %s, iptables %s: %d modules present", h.release, backend, len(present))
	if len(loaded) > 0 {
		f.Detail += fmt.Sprintf(", loaded now with modprobe: %s", strings.Join(loaded, ", "))
	}
	return append([]platform.Finding{f}, out...)
}

// missingModule is the finding for a module modprobe could not load.
func (h host) missingModule(m kernelModule, msg []byte, err error) platform.Finding {
	f := platform.Finding{Check: "module " + m.name}
	why := strings.TrimSpace(string(msg))
	if why == "" {
		why = err.Error()
	}
	switch {
	case errors.Is(err, errNoModprobe):
		f.Detail = fmt.Sprintf("%s is not loaded, and modprobe is not installed to load it", m.name)
		f.Fix = "apt-get install kmod"
	case !fileExists(h.moduleDir):
		f.Detail = fmt.Sprintf("%s is not loaded, and the running kernel's modules are not installed (no %s)", m.name, h.moduleDir)
		f.Fix = fmt.Sprintf("install them (Debian: apt-get install linux-image-%s; Ubuntu: apt-get install linux-modules-%s), or reboot into the kernel whose modules are installed", h.release, h.release)
	default:
		f.Detail = fmt.Sprintf("kernel %s has no module %s: %s", h.release, m.name, why)
		f.Fix = fmt.Sprintf("install the kernel's extra modules (Ubuntu: apt-get install linux-modules-extra-%s), or use a kernel built with %s", h.release, m.config)
	}
	return f
}
