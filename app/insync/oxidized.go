package insync

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxOxidizedBytes bounds a pasted Oxidized configuration.
const MaxOxidizedBytes = 1 << 20

// oxidizedIgnored are keys of Oxidized's http source that backupd has no
// use for: scheme is in the URL, delimiter is the CSV source's,
// read_timeout is the fetch's own (Options.Timeout).
var oxidizedIgnored = []string{"scheme", "delimiter", "read_timeout"}

// ParseOxidizedHTTP reads Oxidized's `source: http` configuration, pasted
// whole (the file, with source.http in it) or as the http block alone,
// into an HTTPJSON source: url, headers, hosts_location, map, vars_map,
// pagination with pagination_key_name, and user/pass (sent as HTTP basic
// authentication, as Oxidized sends them: an Authorization header, a
// secret). `secure: false` is refused: backupd always verifies the
// certificate; give the CA file instead.
func ParseOxidizedHTTP(yamlText string) (HTTPJSON, error) {
	if len(yamlText) > MaxOxidizedBytes {
		return HTTPJSON{}, fmt.Errorf("the configuration is larger than %d KiB", MaxOxidizedBytes>>10)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil {
		return HTTPJSON{}, fmt.Errorf("not YAML: %v", err)
	}
	block := doc
	if src, ok := doc["source"].(map[string]any); ok {
		if d, _ := src["default"].(string); d != "" && !slices.Contains(splitList(d), "http") {
			return HTTPJSON{}, fmt.Errorf("source.default is %s: only Oxidized's http source is read here (the csv source is imported as a router.db)", quote(d))
		}
		if block, ok = src["http"].(map[string]any); !ok {
			return HTTPJSON{}, errors.New("the configuration has no source.http block")
		}
	} else if h, ok := doc["http"].(map[string]any); ok {
		block = h
	}
	if block == nil {
		return HTTPJSON{}, errors.New("the configuration is empty")
	}
	var h HTTPJSON
	var user, pass string
	var pagination bool
	var unknown []string
	for k, v := range block {
		var err error
		switch k {
		case "url":
			h.URL, err = yamlString(k, v)
		case "user":
			user, err = yamlString(k, v)
		case "pass":
			pass, err = yamlString(k, v)
		case "hosts_location":
			h.HostsLocation, err = yamlString(k, v)
		case "pagination":
			b, ok := v.(bool)
			if !ok {
				err = errors.New("pagination: true or false")
			}
			pagination = b
		case "pagination_key_name":
			h.Pagination.NextPath, err = yamlString(k, v)
		case "secure":
			if b, ok := v.(bool); !ok || !b {
				err = errors.New("secure: false turns certificate verification off, which backupd never does: remove it and give the source's CA file instead")
			}
		case "map":
			h.Map, err = yamlMap(k, v)
		case "vars_map":
			h.VarsMap, err = yamlMap(k, v)
		case "headers":
			h.Headers, err = yamlMap(k, v)
		default:
			if !slices.Contains(oxidizedIgnored, k) {
				unknown = append(unknown, k)
			}
		}
		if err != nil {
			return HTTPJSON{}, err
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return HTTPJSON{}, fmt.Errorf("unknown keys in the http source: %s", strings.Join(unknown, ", "))
	}
	if pagination {
		h.Pagination.Kind = PageNext
	} else if h.Pagination.NextPath != "" {
		h.Pagination.NextPath = "" // Oxidized ignores it too without pagination: true
	}
	if user != "" && pass != "" {
		if h.Headers == nil {
			h.Headers = map[string]string{}
		}
		h.Headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	if err := h.Validate(); err != nil {
		return HTTPJSON{}, err
	}
	return h, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

func yamlString(k string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int, bool, float64:
		return fmt.Sprint(x), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("%s: a single value", k)
}

func yamlMap(k string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a map of names to values", k)
	}
	out := make(map[string]string, len(m))
	for mk, mv := range m {
		s, err := yamlString(k+"."+mk, mv)
		if err != nil {
			return nil, err
		}
		out[mk] = s
	}
	return out, nil
}
