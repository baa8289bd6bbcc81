package predict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/topology"
)

// Cover checks that the profile measured every protocol the graph's calls
// use and every payload they carry (a service's answer, per version), and
// names the first field it does not cover with what the profile has.
func (p *UnitCosts) Cover(g *topology.Graph) error {
	if len(p.Payloads) == 0 {
		return fmt.Errorf("the profile measured no %s payloads", p.Reference)
	}
	lo, hi := p.Payloads[0], p.Payloads[len(p.Payloads)-1]
	has := func() string {
		s := fmt.Sprintf("the profile (%s) measured protocols %s and payloads %s B", p.Source, strings.Join(p.Protocols, ", "), joinInts(p.Payloads))
		if len(p.Uncovered) > 0 {
			s += " (left out: " + strings.Join(p.Uncovered, "; ") + ")"
		}
		return s
	}
	proto := func(field string, pr topology.Protocol) error {
		if !slices.Contains(p.Protocols, string(pr.Or())) {
			return fmt.Errorf("graph %q: %s: protocol %s is not covered: %s; profile it with a study whose protocol sweep includes %s", g.Name, field, pr.Or(), has(), pr.Or())
		}
		return nil
	}
	if err := proto("entry_protocol", g.EntryProtocol); err != nil {
		return err
	}
	for i, s := range g.Services {
		size := func(field string, n int) error {
			if n < lo || n > hi {
				return fmt.Errorf("graph %q: services[%d] (%s): %s %d is not covered: %s, from %d to %d B", g.Name, i, s.Name, field, n, has(), lo, hi)
			}
			return nil
		}
		if err := size("response_size", payloadOf(s.ResponseSize)); err != nil {
			return err
		}
		steps := func(field string, script []topology.Step) error {
			for j, st := range script {
				for _, c := range st.Calls() {
					if err := proto(fmt.Sprintf("services[%d] (%s): %s[%d] call to %s", i, s.Name, field, j, c.Service), c.Protocol); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := steps("script", s.Script); err != nil {
			return err
		}
		for k, v := range s.Versions {
			if v.ResponseSize > 0 {
				if err := size(fmt.Sprintf("versions[%d] (%s) response_size", k, v.Name), v.ResponseSize); err != nil {
					return err
				}
			}
			if err := steps(fmt.Sprintf("versions[%d] (%s) script", k, v.Name), v.Script); err != nil {
				return err
			}
		}
	}
	return nil
}

// defaultPayload is the answer's size when a graph gives none: the test
// service's smallest JSON answer is about this size.
const defaultPayload = 100

// payloadOf is the size a service answers with: its response_size, or the
// test service's own small answer when it sets none.
func payloadOf(responseSize int) int {
	if responseSize > 0 {
		return responseSize
	}
	return defaultPayload
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}
