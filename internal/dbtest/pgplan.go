package dbtest

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"backupd/db"
)

// PlanPG is what PostgreSQL's plan of a query reads: the indexes it
// searches, the tables it reads whole, and whether it sorts.
type PlanPG struct {
	Indexes  []string // index names, in plan order
	SeqScans []string // tables read whole
	// IndexOnly names the indexes read without the table's rows.
	IndexOnly []string
	// Sorts counts the Sort nodes: sorts of a whole selection. An
	// Incremental Sort is not one: it orders rows that come in order of a
	// leading key already (ties of a timestamp by id, say), a few at a time.
	Sorts int
	Text  string // the plan, one node a line, for messages
}

// Uses reports whether the plan searches index.
func (p PlanPG) Uses(index string) bool {
	for _, i := range p.Indexes {
		if i == index {
			return true
		}
	}
	return false
}

// ExplainPG plans q on PostgreSQL, on Peek's pool, with sequential
// scans and sorts priced out of the planner's choices (enable_seqscan,
// enable_sort off, in this transaction only). The test tables are small and unanalysed, so the
// planner would otherwise read them whole whatever the indexes; off, it
// still reads a table whole or sorts when no index can serve the query,
// which is what the index tests are about: that one can, at 40,000
// devices as at four.
func ExplainPG(t testing.TB, s *db.Store, q string, args ...any) PlanPG {
	t.Helper()
	return explainPGSet(t, s, nil, q, args...)
}

// ExplainPGCovering plans q as ExplainPG does with bitmap scans priced
// out too: on a small unanalysed table the planner reads rows through a
// bitmap whatever the index holds, and without it an index that holds
// every column the query names is read alone (an Index Only Scan).
func ExplainPGCovering(t testing.TB, s *db.Store, q string, args ...any) PlanPG {
	t.Helper()
	return explainPGSet(t, s, []string{`SET LOCAL enable_bitmapscan = off`}, q, args...)
}

func explainPGSet(t testing.TB, s *db.Store, sets []string, q string, args ...any) PlanPG {
	t.Helper()
	ctx := context.Background()
	tx, err := Peek(t, s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, set := range append([]string{`SET LOCAL enable_seqscan = off`, `SET LOCAL enable_sort = off`}, sets...) {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	var raw string
	if err := tx.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+q, args...).Scan(&raw); err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	var doc []struct{ Plan planPGNode }
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("EXPLAIN %s: %v: %s", q, err, raw)
	}
	var p PlanPG
	var lines []string
	var walk func(n planPGNode, depth int)
	walk = func(n planPGNode, depth int) {
		line := strings.Repeat("  ", depth) + n.NodeType
		if n.Relation != "" {
			line += " on " + n.Relation
		}
		if n.Index != "" {
			line += " using " + n.Index
			p.Indexes = append(p.Indexes, n.Index)
		}
		switch n.NodeType {
		case "Seq Scan":
			p.SeqScans = append(p.SeqScans, n.Relation)
		case "Sort":
			p.Sorts++
		case "Index Only Scan":
			p.IndexOnly = append(p.IndexOnly, n.Index)
		}
		lines = append(lines, line)
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(doc[0].Plan, 0)
	sort.Strings(p.SeqScans)
	p.Text = strings.Join(lines, "\n")
	return p
}

type planPGNode struct {
	NodeType string       `json:"Node Type"`
	Relation string       `json:"Relation Name"`
	Index    string       `json:"Index Name"`
	Plans    []planPGNode `json:"Plans"`
}
