package testserve

import (
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a Prometheus text exposition, by metric name.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses a Prometheus text exposition.
func ParseMetrics(r io.Reader) (Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	return Metrics(fams), err
}

// Scrape GETs url (a server's /metrics) with the bearer token ("" =
// none) and parses the answer, which must be 200.
func Scrape(url, token string) (Metrics, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return ParseMetrics(resp.Body)
}

// Value returns the value of the first sample of metric name whose labels
// include every name, value pair of labels: a counter's or a gauge's
// value, a histogram's sample count. ok is false when there is none.
func (m Metrics) Value(name string, labels ...string) (v float64, ok bool) {
	for _, s := range m[name].GetMetric() {
		if hasLabels(s, labels) {
			switch {
			case s.Counter != nil:
				return s.GetCounter().GetValue(), true
			case s.Gauge != nil:
				return s.GetGauge().GetValue(), true
			case s.Histogram != nil:
				return float64(s.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

// hasLabels reports whether s has every name, value pair of labels.
func hasLabels(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range s.GetLabel() {
			found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}
		if !found {
			return false
		}
	}
	return true
}
