// Benchratio reads `go test -bench` output and prints, for every benchmark run as an
// impl=sdk and impl=raw pair, the SDK's median over the raw floor's for each metric, with
// the performance targets of the project checked beside them. The sandbox's own
// throughput figures (req/s) are printed as they are.
//
//	go test -run '^$' -bench . -benchmem | go run ./scripts/benchratio
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if err := report(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// samples holds every value of one metric of one benchmark variant.
type samples map[string][]float64 // unit -> values

var (
	resultLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	implPart   = regexp.MustCompile(`/impl=(sdk|raw)`)
)

func report(in io.Reader, out io.Writer) error {
	pairs := map[string]map[string]samples{} // benchmark without impl -> impl -> samples
	throughput := map[string][]float64{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		values := parseMetrics(m[2])
		if impl := implPart.FindStringSubmatch(m[1]); impl != nil {
			name := implPart.ReplaceAllString(m[1], "")
			if pairs[name] == nil {
				pairs[name] = map[string]samples{}
			}
			if pairs[name][impl[1]] == nil {
				pairs[name][impl[1]] = samples{}
			}
			for unit, v := range values {
				pairs[name][impl[1]][unit] = append(pairs[name][impl[1]][unit], v)
			}
		} else if v, ok := values["req/s"]; ok {
			throughput[m[1]] = append(throughput[m[1]], v)
		} else {
			for _, unit := range []string{"x-raw", "x-unmarshal"} {
				if v, ok := values[unit]; ok {
					throughput[m[1]+" "+unit] = append(throughput[m[1]+" "+unit], v)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}

	fmt.Fprintf(out, "%-58s %-12s %14s %14s %9s  %s\n", "benchmark", "metric", "sdk", "raw", "sdk/raw", "target")
	for _, name := range sortedKeys(pairs) {
		sdk, raw := pairs[name]["sdk"], pairs[name]["raw"]
		if sdk == nil || raw == nil {
			continue
		}
		for _, unit := range []string{"ns/op", "ns/item", "allocs/op", "allocs/item", "B/op", "peak-live-B", "new-conns"} {
			s, okS := median(sdk[unit])
			r, okR := median(raw[unit])
			if !okS || !okR {
				continue
			}
			ratio := "-"
			if r != 0 {
				ratio = fmt.Sprintf("%.3f", s/r)
			}
			fmt.Fprintf(out, "%-58s %-12s %14.1f %14.1f %9s  %s\n", name, unit, s, r, ratio, verdict(name, unit, s, r))
		}
	}
	small, okSmall := median(pairs["BenchmarkCustomersList/items=10000"]["sdk"]["peak-live-B"])
	large, okLarge := median(pairs["BenchmarkCustomersList/items=100000"]["sdk"]["peak-live-B"])
	if okSmall && okLarge && small > 0 {
		ratio := large / small
		mark := "ok"
		if ratio > 1.2 {
			mark = "MISSED"
		}
		fmt.Fprintf(out, "\n%-58s %14.3f  %s (<= 1.2x: one page held, however long the list)\n",
			"CustomersList peak-live-B, 100,000 over 10,000 (sdk)", ratio, mark)
	}
	if len(throughput) > 0 {
		fmt.Fprintln(out)
		for _, name := range sortedKeys(throughput) {
			v, _ := median(throughput[name])
			fmt.Fprintf(out, "%-58s %14.3f  %s\n", name, v, interleavedVerdict(name, v))
		}
	}
	return nil
}

// verdict checks a figure against the project's targets (BENCHMARKS.md).
func verdict(name, unit string, sdk, raw float64) string {
	check := func(ok bool, target string) string {
		if ok {
			return "ok (" + target + ")"
		}
		return "MISSED (" + target + ")"
	}
	switch {
	case strings.Contains(name, "ParseEvent") && unit == "ns/op":
		return check(sdk <= 1.5*raw, "<= 1.5x")
	case strings.Contains(name, "CustomersList") && unit == "ns/item":
		return check(sdk <= 1.1*raw, "<= 1.1x")
	case strings.Contains(name, "CustomersList") && unit == "allocs/item":
		return check(sdk <= 30, "<= 30 per item")
	case strings.Contains(name, "CustomersList") && unit == "peak-live-B":
		return "see the 100,000 over 10,000 line"
	case unit == "ns/op":
		return check(sdk <= 1.15*raw, "<= 1.15x")
	case unit == "allocs/op":
		return check(sdk <= raw+25, "<= raw + 25")
	case unit == "new-conns" && strings.Contains(name, "parallel8"):
		return check(sdk == 0, "0 after warm-up")
	}
	return ""
}

// interleavedVerdict checks the ratios measured by alternating the SDK and its floor
// within one benchmark: the steadiest figure on a noisy machine.
func interleavedVerdict(name string, v float64) string {
	switch {
	case strings.HasSuffix(name, " x-raw"):
		if v <= 1.15 {
			return "ok (<= 1.15x, interleaved)"
		}
		return "MISSED (<= 1.15x, interleaved)"
	case strings.HasSuffix(name, " x-unmarshal"):
		if v <= 1.5 {
			return "ok (<= 1.5x, interleaved)"
		}
		return "MISSED (<= 1.5x, interleaved)"
	}
	return ""
}

// parseMetrics reads the "value unit" pairs after a benchmark's iteration count.
func parseMetrics(s string) map[string]float64 {
	f := strings.Fields(s)
	values := map[string]float64{}
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			values[f[i+1]] = v
		}
	}
	return values
}

func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	v = slices.Clone(v)
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
