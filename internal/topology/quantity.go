package topology

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
)

// quantityRE is the Kubernetes quantity grammar: a decimal number followed
// by a binary suffix (Ki..Ei), a decimal suffix (n, u, m, k, M..E) or a
// decimal exponent (e3, E-2).
var quantityRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)

var binarySuffix = map[string]uint{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

var decimalSuffix = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

// parseQuantity returns the exact value of a non-negative Kubernetes
// quantity such as "700m", "1.5", "500Mi" or "1e3".
func parseQuantity(q string) (*big.Rat, error) {
	m := quantityRE.FindStringSubmatch(q)
	if m == nil {
		return nil, fmt.Errorf("quantity %q: want a non-negative Kubernetes quantity such as \"700m\" or \"500Mi\"", q)
	}
	v, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, fmt.Errorf("quantity %q: bad number", q)
	}
	suffix := m[2]
	if shift, ok := binarySuffix[suffix]; ok {
		return v.Mul(v, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift))), nil
	}
	exp, ok := decimalSuffix[suffix]
	if !ok {
		e, err := strconv.Atoi(suffix[1:])
		if err != nil || e < -30 || e > 30 {
			return nil, fmt.Errorf("quantity %q: exponent out of range", q)
		}
		exp = e
	}
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil))
	if exp < 0 {
		return v.Quo(v, p), nil
	}
	return v.Mul(v, p), nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// ceilInt64 rounds a non-negative value up to an int64, as Kubernetes
// rounds quantities up (0.1m of CPU is 1m).
func ceilInt64(v *big.Rat, q string) (int64, error) {
	n, rem := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if rem.Sign() > 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsInt64() {
		return 0, fmt.Errorf("quantity %q: too large", q)
	}
	return n.Int64(), nil
}

// ParseCPU returns a CPU quantity ("700m", "2", "0.5") in millicores,
// rounded up. The empty string is 0.
func ParseCPU(q string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	v, err := parseQuantity(q)
	if err != nil {
		return 0, err
	}
	return ceilInt64(v.Mul(v, big.NewRat(1000, 1)), q)
}

// ParseMemory returns a memory quantity ("500Mi", "2Gi", "128M") in bytes,
// rounded up. The empty string is 0.
func ParseMemory(q string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	v, err := parseQuantity(q)
	if err != nil {
		return 0, err
	}
	return ceilInt64(v, q)
}
