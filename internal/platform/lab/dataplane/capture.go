package dataplane

import (
	"bytes"
	"fmt"
	"net/netip"
)

// Ports and marks of the data plane, Istio's values.
// ProxyUID is the user every proxy runs as, as Istio's do; sidecars' capture rules
// let this user's traffic through, and their files are its.
const ProxyUID = 1337

const (
	portOutbound       = 15001    // captured outbound traffic
	portInbound        = 15006    // captured inbound traffic (plaintext for ambient)
	portHBONE          = 15008    // HBONE: HTTP/2 CONNECT in mutual TLS
	proxyUID           = ProxyUID // the proxies' user, exempt from sidecar capture
	inboundPassthrough = "127.0.0.6"
	// ztunnel marks its own sockets 0x539 and TPROXYed packets 0x111,
	// and routes the latter through table 100 to the local stack.
	markProxy  = "0x539/0xfff"
	markTProxy = "0x111/0xfff"
	tproxyRT   = "100"
)

// capture is a set of rules in one network namespace: what installs it
// and what removes it again.
type capture struct {
	Netns   string
	Install []cmd
	Remove  []cmd
}

// cmd is a command with optional stdin. A removal step that finds
// nothing to remove fails harmlessly: Tolerant says so.
type cmd struct {
	Args     []string
	Stdin    []byte
	Tolerant bool
}

func restore(rules []byte) cmd {
	return cmd{Args: []string{"iptables-restore", "--noflush"}, Stdin: rules}
}

// Istio's sidecar ports that inbound capture leaves alone: the Envoy
// Prometheus endpoint, the health port and the agent's port, as
// istio-init's default `-d 15090,15021,15020`.
var sidecarInboundExcluded = []int{15090, 15021, 15020}

// sidecarRules are the rules istio-init (`istio-iptables -p 15001 -z 15006
// -u 1337 -m REDIRECT -i '*' -b '*' -d 15090,15021,15020`) writes in the
// pod's namespace: all inbound TCP to 15006, all outbound TCP not from
// the proxy's user to 15001, with Istio's loopback special cases.
func sidecarRules() []byte {
	var b bytes.Buffer
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("*nat")
	for _, c := range []string{"ISTIO_INBOUND", "ISTIO_REDIRECT", "ISTIO_IN_REDIRECT", "ISTIO_OUTPUT"} {
		w(":%s - [0:0]", c)
	}
	w("-A ISTIO_INBOUND -p tcp --dport %d -j RETURN", portHBONE)
	w("-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports %d", portOutbound)
	w("-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports %d", portInbound)
	w("-A PREROUTING -p tcp -j ISTIO_INBOUND")
	for _, p := range sidecarInboundExcluded {
		w("-A ISTIO_INBOUND -p tcp --dport %d -j RETURN", p)
	}
	w("-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT")
	w("-A OUTPUT -p tcp -j ISTIO_OUTPUT")
	w("-A ISTIO_OUTPUT -o lo -s %s/32 -j RETURN", inboundPassthrough)
	for _, m := range []string{"--uid-owner", "--gid-owner"} {
		w("-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport %d -m owner %s %d -j ISTIO_IN_REDIRECT", portHBONE, m, proxyUID)
		w("-A ISTIO_OUTPUT -o lo -m owner ! %s %d -j RETURN", m, proxyUID)
		w("-A ISTIO_OUTPUT -m owner %s %d -j RETURN", m, proxyUID)
	}
	w("-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN")
	w("-A ISTIO_OUTPUT -j ISTIO_REDIRECT")
	w("COMMIT")
	return b.Bytes()
}

// dropChains flushes and deletes chains of a table once nothing jumps to
// them; declaring a chain creates it if a partial install never did.
func dropChains(table string, chains ...string) cmd {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%s\n", table)
	for _, c := range chains {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	for _, c := range chains {
		fmt.Fprintf(&b, "-X %s\n", c)
	}
	b.WriteString("COMMIT\n")
	return restore(b.Bytes())
}

// unjump deletes a jump rule, if it is there.
func unjump(table string, rule ...string) cmd {
	return cmd{Args: append([]string{"iptables", "-t", table, "-D"}, rule...), Tolerant: true}
}

func sidecarCapture(netns string) capture {
	return capture{Netns: netns, Install: []cmd{restore(sidecarRules())}, Remove: []cmd{
		unjump("nat", "PREROUTING", "-p", "tcp", "-j", "ISTIO_INBOUND"),
		unjump("nat", "OUTPUT", "-p", "tcp", "-j", "ISTIO_OUTPUT"),
		dropChains("nat", "ISTIO_INBOUND", "ISTIO_REDIRECT", "ISTIO_IN_REDIRECT", "ISTIO_OUTPUT"),
	}}
}

// Ambient capture lives in the node's namespace, which every packet of a
// pod crosses (ztunnel's node-level redirection before in-pod mode):
//   - mangle PREROUTING: packets of connections the node proxy already
//     owns go to it (the socket match); new TCP from a meshed local pod is
//     TPROXYed to 15001; new TCP to a meshed local pod goes to 15008 when
//     it is HBONE, to 15006 (plaintext, refused under STRICT) otherwise;
//   - nat PREROUTING: TPROXYed packets skip the Service DNAT, so the node
//     proxy sees the Service VIP and balances itself, as ztunnel does;
//   - nat OUTPUT: the node's own connections to a local pod (the node
//     proxy's HBONE, or a plaintext client on the node) are redirected
//     the same way; the node proxy's delivery to the pod carries the
//     0x539 mark and passes;
//   - a policy route delivers TPROXY-marked packets locally.
const (
	chainAmbientPre    = "ztunnel-PREROUTING"
	chainAmbientDivert = "ztunnel-DIVERT"
	chainAmbientOut    = "ztunnel-OUTPUT"
)

func ambientRules(pods []netip.Addr) []byte {
	var b bytes.Buffer
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	tproxy := func(port int) string {
		return fmt.Sprintf("TPROXY --on-port %d --on-ip 127.0.0.1 --tproxy-mark %s", port, markTProxy)
	}
	w("*mangle")
	w(":%s - [0:0]", chainAmbientPre)
	w(":%s - [0:0]", chainAmbientDivert)
	w("-I PREROUTING 1 -j %s", chainAmbientPre)
	w("-A %s -j MARK --set-xmark %s", chainAmbientDivert, markTProxy)
	w("-A %s -j ACCEPT", chainAmbientDivert)
	w("-A %s -p tcp -m socket -j %s", chainAmbientPre, chainAmbientDivert)
	for _, ip := range pods {
		w("-A %s -p tcp -s %s/32 -j %s", chainAmbientPre, ip, tproxy(portOutbound))
	}
	for _, ip := range pods {
		w("-A %s -p tcp -d %s/32 --dport %d -j %s", chainAmbientPre, ip, portHBONE, tproxy(portHBONE))
		w("-A %s -p tcp -d %s/32 -j %s", chainAmbientPre, ip, tproxy(portInbound))
	}
	w("COMMIT")
	w("*nat")
	w(":%s - [0:0]", chainAmbientPre)
	w(":%s - [0:0]", chainAmbientOut)
	w("-I PREROUTING 1 -j %s", chainAmbientPre)
	w("-I OUTPUT 1 -j %s", chainAmbientOut)
	w("-A %s -m mark --mark %s -j ACCEPT", chainAmbientPre, markTProxy)
	for _, ip := range pods {
		w("-A %s -p tcp -d %s/32 --dport %d -j REDIRECT --to-ports %d", chainAmbientOut, ip, portHBONE, portHBONE)
		w("-A %s -p tcp -d %s/32 -m mark ! --mark %s -j REDIRECT --to-ports %d", chainAmbientOut, ip, markProxy, portInbound)
	}
	w("COMMIT")
	return b.Bytes()
}

func ambientCapture(netns string, pods []netip.Addr) capture {
	return capture{
		Netns: netns,
		Install: []cmd{
			{Args: []string{"ip", "rule", "add", "fwmark", markTProxy, "pref", "32764", "lookup", tproxyRT}},
			{Args: []string{"ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", tproxyRT}},
			restore(ambientRules(pods)),
		},
		Remove: []cmd{
			unjump("mangle", "PREROUTING", "-j", chainAmbientPre),
			unjump("nat", "PREROUTING", "-j", chainAmbientPre),
			unjump("nat", "OUTPUT", "-j", chainAmbientOut),
			dropChains("mangle", chainAmbientPre, chainAmbientDivert),
			dropChains("nat", chainAmbientPre, chainAmbientOut),
			{Args: []string{"ip", "route", "del", "local", "0.0.0.0/0", "dev", "lo", "table", tproxyRT}, Tolerant: true},
			{Args: []string{"ip", "rule", "del", "fwmark", markTProxy, "pref", "32764", "lookup", tproxyRT}, Tolerant: true},
		},
	}
}
