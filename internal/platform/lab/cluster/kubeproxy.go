package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"sort"
)

// Service load balancing follows kube-proxy's iptables mode: in each
// node's nat table, PREROUTING (traffic from pods) and OUTPUT (traffic from
// the node's own daemons) jump to MB-SERVICES, which sends each VIP:port
// to a per-Service chain picking one endpoint chain at random with
// -m statistic, which DNATs to the endpoint. Connections from an endpoint
// to its own Service (hairpin) are marked and SNATed to the node, or the
// reply would bypass the DNAT.

const (
	chainServices    = "MB-SERVICES"
	chainPostrouting = "MB-POSTROUTING"
	masqMark         = "0x4000/0x4000"
)

// svcRule is one Service as the rules need it.
type svcRule struct {
	Key       string // namespace/name
	VIP       netip.Addr
	Port      int
	Endpoints []netip.AddrPort
}

// chainName hashes its parts into a stable chain name of at most 28
// characters, as kube-proxy does.
func chainName(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	enc := base32.StdEncoding.EncodeToString(h.Sum(nil))
	return "MB-" + kind + "-" + enc[:16]
}

func svcChain(s svcRule) string { return chainName("SVC", s.Key, fmt.Sprint(s.Port)) }

func sepChain(s svcRule, ep netip.AddrPort) string {
	return chainName("SEP", s.Key, fmt.Sprint(s.Port), ep.String())
}

// renderBase is installed once per node: the jumps into the lab's chains
// and the hairpin SNAT.
func renderBase(nodeIP netip.Addr) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*nat\n:%s - [0:0]\n:%s - [0:0]\n", chainServices, chainPostrouting)
	fmt.Fprintf(&b, "-I PREROUTING 1 -m comment --comment \"meshbench service portals\" -j %s\n", chainServices)
	fmt.Fprintf(&b, "-I OUTPUT 1 -m comment --comment \"meshbench service portals\" -j %s\n", chainServices)
	fmt.Fprintf(&b, "-I POSTROUTING 1 -j %s\n", chainPostrouting)
	fmt.Fprintf(&b, "-A %s -m mark --mark %s -j SNAT --to-source %s\n", chainPostrouting, masqMark, nodeIP)
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// renderServices renders every Service's chains for iptables-restore
// --noflush: declaring a chain flushes it, so the output replaces the
// lab's Service rules and nothing else in the table (a mesh's rules stay).
// Chains in stale, from the previous sync, are flushed and deleted. It
// returns the rules and the chains they use, the next sync's stale set.
func renderServices(svcs []svcRule, stale map[string]bool) ([]byte, map[string]bool) {
	svcs = append([]svcRule(nil), svcs...)
	sort.Slice(svcs, func(i, j int) bool {
		return svcs[i].Key < svcs[j].Key || svcs[i].Key == svcs[j].Key && svcs[i].Port < svcs[j].Port
	})
	used := map[string]bool{}
	var chains, rules bytes.Buffer
	fmt.Fprintf(&chains, "*nat\n:%s - [0:0]\n", chainServices)
	for _, s := range svcs {
		if len(s.Endpoints) == 0 {
			continue // no rule: the VIP does not answer, as with no endpoints
		}
		sc := svcChain(s)
		used[sc] = true
		fmt.Fprintf(&chains, ":%s - [0:0]\n", sc)
		fmt.Fprintf(&rules, "-A %s -d %s/32 -p tcp -m tcp --dport %d -m comment --comment \"%s\" -j %s\n",
			chainServices, s.VIP, s.Port, s.Key, sc)
		n := len(s.Endpoints)
		for i, ep := range s.Endpoints {
			ec := sepChain(s, ep)
			used[ec] = true
			fmt.Fprintf(&chains, ":%s - [0:0]\n", ec)
			if i < n-1 {
				fmt.Fprintf(&rules, "-A %s -m statistic --mode random --probability %0.10f -j %s\n", sc, 1/float64(n-i), ec)
			} else {
				fmt.Fprintf(&rules, "-A %s -j %s\n", sc, ec)
			}
			fmt.Fprintf(&rules, "-A %s -s %s/32 -j MARK --set-xmark %s\n", ec, ep.Addr(), masqMark)
			fmt.Fprintf(&rules, "-A %s -p tcp -m tcp -j DNAT --to-destination %s\n", ec, ep)
		}
	}
	var gone []string
	for c := range stale {
		if !used[c] {
			gone = append(gone, c)
		}
	}
	sort.Strings(gone)
	for _, c := range gone {
		fmt.Fprintf(&chains, ":%s - [0:0]\n", c)
	}
	for _, c := range gone {
		fmt.Fprintf(&rules, "-X %s\n", c)
	}
	chains.Write(rules.Bytes())
	chains.WriteString("COMMIT\n")
	return chains.Bytes(), used
}
