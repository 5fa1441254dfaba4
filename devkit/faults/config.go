package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// encodeConfig turns a go-zero config struct into the map its JSON file holds: keys as
// go-zero names them (the json tag's name, else the field name; embedded structs inline),
// durations as strings ("1.5s", which go-zero parses with time.ParseDuration), nil slices,
// nil pointers and all-zero structs left out (so an optional block such as an empty Etcd is
// absent rather than present and incomplete). Everything else is written, zero values
// included, so the service runs with exactly the struct, not with defaults re-applied.
func encodeConfig(v reflect.Value) any {
	if v.Type() == reflect.TypeOf(time.Duration(0)) {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return encodeConfig(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		encodeFields(v, m)
		return m
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = encodeConfig(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := map[string]any{}
		it := v.MapRange()
		for it.Next() {
			m[fmt.Sprint(it.Key().Interface())] = encodeConfig(it.Value())
		}
		return m
	default:
		return v.Interface()
	}
}

func encodeFields(v reflect.Value, into map[string]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			encodeFields(fv, into)
			continue
		}
		if name == "" {
			name = f.Name
		}
		// A zero struct stays out (an optional block absent), unless it is a required block
		// with a default in it: then its zeros were set on purpose (Pay.BuyerConfirms false
		// over default=true).
		if fv.Kind() == reflect.Struct && fv.IsZero() && fv.Type() != reflect.TypeOf(time.Time{}) &&
			(strings.Contains(tag, "optional") || !hasDefault(fv.Type())) {
			continue
		}
		if e := encodeConfig(fv); e != nil {
			into[name] = e
		}
	}
}

// writeConfig writes cfg as the JSON file go-zero's conf.Load reads, loads it back through
// load (the service's own LoadConfig) and fails unless what comes back is cfg: a field the
// encoding dropped or a duration go-zero read differently is caught here, not in the run.
func writeConfig[T any](file string, cfg T, load func(string) (T, error)) error {
	b, err := json.MarshalIndent(encodeConfig(reflect.ValueOf(cfg)), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	back, err := load(file)
	if err != nil {
		return fmt.Errorf("%s does not load: %w", file, err)
	}
	if !reflect.DeepEqual(back, cfg) {
		return fmt.Errorf("%s loads as %+v, want %+v", file, back, cfg)
	}
	return nil
}

// viaProxy is dsn with its address replaced by addr.
func viaProxy(dsn, addr string) (string, error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	c.Addr = addr
	return c.FormatDSN(), nil
}

// hasDefault reports whether a field of struct type t carries a go-zero default (",default=").
func hasDefault(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if strings.Contains(t.Field(i).Tag.Get("json"), "default=") {
			return true
		}
	}
	return false
}
