package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// replicaSpread shows how each mesh spread requests over the replicas of
// every service that has several: the requests each replica answered,
// summed over the usable repetitions, and the busiest replica's share.
// An L4 path (no mesh, a ztunnel-like node proxy) balances connections,
// so long-lived connections (gRPC, HTTP/2) can pin a service's requests
// to one replica; a sidecar or a waypoint balances each request.
func (b *builder) replicaSpread() Section {
	s := Section{ID: "replica-spread", Title: "Requests per replica"}
	t := &Table{Header: []string{"Mesh", "Configuration", "Service", "Requests per replica", "Busiest share"}}
	for _, c := range b.d.Configs {
		for _, mesh := range b.d.Meshes {
			g := b.d.Group(mesh, c)
			if g == nil {
				continue
			}
			type key struct{ ns, svc string }
			counts := map[key]map[string]int64{}
			for _, r := range g.Reps {
				for _, rr := range r.Replicas {
					k := key{rr.Namespace, rr.Service}
					if counts[k] == nil {
						counts[k] = map[string]int64{}
					}
					counts[k][rr.Pod] += rr.Requests
				}
			}
			keys := make([]key, 0, len(counts))
			for k, pods := range counts {
				if len(pods) > 1 {
					keys = append(keys, k)
				}
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].ns != keys[j].ns {
					return keys[i].ns < keys[j].ns
				}
				return keys[i].svc < keys[j].svc
			})
			for _, k := range keys {
				pods := counts[k]
				names := make([]string, 0, len(pods))
				var total, top int64
				for p, n := range pods {
					names = append(names, p)
					total += n
					top = max(top, n)
				}
				sort.Strings(names)
				parts := make([]string, len(names))
				for i, p := range names {
					parts[i] = p + " " + strconv.FormatInt(pods[p], 10)
				}
				share := "-"
				if total > 0 {
					share = fmt.Sprintf("%.0f%%", 100*float64(top)/float64(total))
				}
				t.Rows = append(t.Rows, []string{mesh, c.Label(), k.ns + "/" + k.svc, strings.Join(parts, ", "), share})
			}
		}
	}
	if len(t.Rows) == 0 {
		return s // not counted, or no service has several replicas
	}
	s.Blocks = append(s.Blocks,
		text("The requests each replica answered during the measured cells (warm-up included), summed over repetitions, for every service with several replicas; the busiest replica's share of them. An L4 path (no mesh, or a ztunnel-like node proxy) picks a replica per connection, so long-lived connections such as gRPC's can pin a service's requests to one replica; a sidecar or a waypoint balances each request."),
		table(t))
	return s
}
