package insync

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkFetchNetBox20k fetches 20,000 devices, 1000 a page, each in
// the shape of pynetbox's device.json (ids, names and addresses
// changed). The pages are rendered before the clock starts, so this
// measures the fetch: requests, reading, decoding and mapping.
func BenchmarkFetchNetBox20k(b *testing.B) {
	const total = 20000
	url, pageBytes := netbox20k(b, total)
	nb := NetBox{URL: url, Token: tokenV1, GroupFrom: []string{"site", "role"}}
	b.ResetTimer()
	for b.Loop() {
		recs, err := nb.Fetch(context.Background(), Options{})
		if err != nil || len(recs) != total {
			b.Fatalf("%d records, %v", len(recs), err)
		}
	}
	b.ReportMetric(float64(pageBytes), "bytes/page")
}

// netbox20k serves total devices, 1000 a page, each in the shape of
// pynetbox's device.json (ids, names and addresses changed), rendered
// before the clock starts. It returns the URL and the size of a page.
func netbox20k(b *testing.B, total int) (string, int) {
	const size = 1000
	tmpl := loadList(b, "device.json")[0]
	delete(tmpl, "config_context") // a list leaves it out unless asked (exclude=config_context is sent)
	pages := make([][]byte, 0, total/size)
	for p := range total / size {
		results := make([]map[string]any, 0, size)
		for i := p * size; i < (p+1)*size; i++ {
			d := make(map[string]any, len(tmpl))
			for k, v := range tmpl {
				d[k] = v
			}
			d["id"] = i + 1
			d["name"] = fmt.Sprintf("dev%05d", i+1)
			d["display_name"] = d["name"]
			ip := map[string]any{"id": i + 1, "family": 4, "address": fmt.Sprintf("10.%d.%d.%d/32", i>>16&255, i>>8&255, i&255)}
			d["primary_ip"], d["primary_ip4"] = ip, ip
			results = append(results, d)
		}
		var next any
		if p+1 < total/size {
			next = "/api/dcim/devices/?limit=1000&offset=" + strconv.Itoa((p+1)*size)
		}
		raw, err := json.Marshal(map[string]any{"count": total, "next": next, "previous": nil, "results": results})
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, raw)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Token "+tokenV1 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pages[off/size])
	}))
	b.Cleanup(srv.Close)
	return srv.URL, len(pages[0])
}
