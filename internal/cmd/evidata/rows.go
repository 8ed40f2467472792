package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// jsonRows normalises the layouts public copies of a question set come in
// to one JSON array of records: a JSON array (kept), one record a line
// (JSONL), or pandas' column layout (DataFrame.to_json's default: an
// object of columns, each an object from row number to value). Any other
// JSON object (SQuAD's {"data": …}) is returned as it is. With idField
// set, each record's id is read from that field (copied to "_id" and
// "id").
func jsonRows(raw []byte, idField string) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	var rows []map[string]json.RawMessage
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		if idField == "" {
			return raw, nil
		}
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, err
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		var first map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&first); err != nil {
			return nil, err
		}
		if dec.More() { // JSONL: more records follow
			rows = append(rows, first)
			for {
				var r map[string]json.RawMessage
				if err := dec.Decode(&r); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					return nil, fmt.Errorf("line %d: %w", len(rows)+1, err)
				}
				rows = append(rows, r)
			}
		} else if cols, ok := columns(first); ok {
			rows = cols
		} else if idField == "" {
			return raw, nil
		} else {
			rows = append(rows, first)
		}
	default:
		return nil, errors.New("not JSON: want an array, JSON lines or an object")
	}
	if idField != "" {
		for i, r := range rows {
			v, ok := r[idField]
			if !ok {
				return nil, fmt.Errorf("record %d has no %q field", i, idField)
			}
			r["_id"], r["id"] = v, v
			delete(r, idField)
		}
	}
	return json.Marshal(rows)
}

// columns reads pandas' column layout: every value an object keyed by row
// numbers, the same rows in every column. ok is false for anything else.
func columns(obj map[string]json.RawMessage) ([]map[string]json.RawMessage, bool) {
	if len(obj) == 0 {
		return nil, false
	}
	var n int
	var rows []map[string]json.RawMessage
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	for ci, name := range names {
		var col map[string]json.RawMessage
		if err := json.Unmarshal(obj[name], &col); err != nil || len(col) == 0 {
			return nil, false
		}
		if ci == 0 {
			n = len(col)
			rows = make([]map[string]json.RawMessage, n)
			for i := range rows {
				rows[i] = map[string]json.RawMessage{}
			}
		}
		if len(col) != n {
			return nil, false
		}
		for k, v := range col {
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= n {
				return nil, false
			}
			rows[i][name] = v
		}
	}
	return rows, true
}

// startsWithSpace reports a string that opens with white space.
func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
