package insync

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tokens the fake NetBox knows.
const (
	tokenV1       = "0123456789abcdef0123456789abcdef01234567"
	tokenV2       = "nbt_shortkey1234567.plaintexttoken7890abcdef1234567890abcdef" // shape of pynetbox's token_provision_v2.json
	tokenNoRights = "fedcba9876543210fedcba9876543210fedcba98"
)

// fakeNetBox serves NetBox's list API from fixture objects: count, next,
// previous and results, limit and offset, and the token header checked
// (401 without or with an unknown token, 403 for a token without rights,
// as NetBox answers).
type fakeNetBox struct {
	t       *testing.T
	lists   map[string][]map[string]any         // "dcim/devices/" → objects
	v4      bool                                // config_context only on ?include=config_context (4.x); else unless ?exclude= (3.x)
	failAt  map[int]func(w http.ResponseWriter) // device page number (1-based) → broken answer
	lieBy   int                                 // added to the devices count
	driftAt int                                 // from this device page on, the count is one more

	mu       sync.Mutex
	requests []*http.Request
}

func (f *fakeNetBox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Clone(r.Context()))
	f.mu.Unlock()
	auth := r.Header.Get("Authorization")
	switch auth {
	case "Token " + tokenV1, "Bearer " + tokenV2:
	case "Token " + tokenNoRights:
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"detail": "You do not have permission to perform this action."}`)
		return
	default:
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail": "Invalid token"}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/")
	objs, ok := f.lists[path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 50
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	page := offset/limit + 1
	count := len(objs)
	if path == "dcim/devices/" {
		if fail := f.failAt[page]; fail != nil {
			fail(w)
			return
		}
		count += f.lieBy
		if f.driftAt > 0 && page >= f.driftAt {
			count++
		}
	}
	end := min(offset+limit, len(objs))
	results := []map[string]any{}
	for _, o := range objs[min(offset, len(objs)):end] {
		c := make(map[string]any, len(o))
		for k, v := range o {
			c[k] = v
		}
		_, has := c["config_context"]
		if has && (f.v4 && q.Get("include") != "config_context" || !f.v4 && q.Get("exclude") == "config_context") {
			delete(c, "config_context")
		}
		results = append(results, c)
	}
	link := func(off int) any {
		if off < 0 || off >= len(objs) {
			return nil
		}
		nq := r.URL.Query()
		nq.Set("offset", strconv.Itoa(off))
		// NetBox builds absolute links from the request's host; behind a
		// TLS-terminating proxy they say http://.
		return "http://" + r.Host + r.URL.Path + "?" + nq.Encode()
	}
	prev := any(nil)
	if offset > 0 {
		prev = link(max(offset-limit, 0))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("API-Version", map[bool]string{true: "4.2", false: "3.7"}[f.v4])
	_ = json.NewEncoder(w).Encode(map[string]any{
		"count": count, "next": link(offset + limit), "previous": prev, "results": results,
	})
}

// start serves f on 127.0.0.1 until the test ends.
func (f *fakeNetBox) start() string {
	srv := httptest.NewServer(f)
	f.t.Cleanup(srv.Close)
	return srv.URL
}

// devicePages counts the device list requests.
func (f *fakeNetBox) devicePages() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.URL.Path == "/api/dcim/devices/" {
			n++
		}
	}
	return n
}

// loadList reads a fixture: a list answer's results, or one object.
func loadList(t testing.TB, name string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "netbox", name))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if page.Results != nil {
		return page.Results
	}
	var one map[string]any
	if err := json.Unmarshal(raw, &one); err != nil {
		t.Fatal(err)
	}
	return []map[string]any{one}
}

// find returns the fixture object named name.
func find(t testing.TB, objs []map[string]any, name string) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o["name"] == name {
			return o
		}
	}
	t.Fatalf("no %q in the fixture", name)
	return nil
}

// slow answers after d: a NetBox that hangs.
func slow(d time.Duration) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { time.Sleep(d) }
}

var jsonMarshal = json.Marshal
