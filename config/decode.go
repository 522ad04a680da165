package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
)

var durationType = reflect.TypeFor[time.Duration]()

// decode unmarshals the raw map m into out (a pointer to a config struct)
// through koanf, rejecting unknown keys. Every problem is recorded under
// prefix + its key path; messages never include the offending value.
func decode(m map[string]any, out any, prefix string, ps *Problems) {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(m, ""), nil); err != nil {
		ps.add(prefix, "cannot read: %v", err)
		return
	}
	err := k.UnmarshalWithConf("", out, koanf.UnmarshalConf{
		DecoderConfig: &mapstructure.DecoderConfig{
			DecodeHook:  mapstructure.ComposeDecodeHookFunc(durationHook, scalarHook),
			ErrorUnused: true,
			TagName:     "koanf",
		},
	})
	root := reflect.TypeOf(out).Elem()
	walkDecodeErrors(err, func(name string, err error) {
		path := join(prefix, displayPath(name))
		if keys, ok := strings.CutPrefix(err.Error(), "has invalid keys: "); ok {
			t, _ := typeAt(root, keyTokens(name))
			for _, key := range strings.Split(keys, ", ") {
				ps.add(join(path, key), "%s", unknownKey(key, keysOf(t)))
			}
			return
		}
		ps.add(path, "%s", decodeMessage(err))
	})
}

// walkDecodeErrors calls fn with the field name and cause of every leaf
// error in the tree mapstructure returns (errors.Join of *DecodeError,
// possibly nested).
func walkDecodeErrors(err error, fn func(name string, err error)) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			walkDecodeErrors(e, fn)
		}
		return
	}
	de, ok := err.(*mapstructure.DecodeError)
	if !ok {
		if inner := errors.Unwrap(err); inner != nil {
			walkDecodeErrors(inner, fn)
		} else {
			fn("", err)
		}
		return
	}
	inner := de.Unwrap()
	var nested *mapstructure.DecodeError
	_, joined := inner.(interface{ Unwrap() []error })
	if joined || errors.As(inner, &nested) {
		walkDecodeErrors(inner, fn)
		return
	}
	fn(de.Name(), inner)
}

// decodeMessage turns a decoder error into a message without the value.
func decodeMessage(err error) string {
	var ute *mapstructure.UnconvertibleTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("must be %s, not %s", describe(ute.Expected.Type()), describe(reflect.TypeOf(ute.Value)))
	}
	var pe *mapstructure.ParseError
	if errors.As(err, &pe) {
		return "must be " + describe(pe.Expected.Type())
	}
	if strings.HasPrefix(err.Error(), "expected a map") {
		return "must be a mapping of keys to values"
	}
	return err.Error()
}

// describe names a type the way a config author thinks of it.
func describe(t reflect.Type) string {
	if t == nil {
		return "empty"
	}
	if t == durationType {
		return "a duration such as 30s"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping of keys to values"
	}
	return t.String()
}

// durationHook decodes "30s"-style strings into time.Duration and refuses a
// bare number other than 0, which would silently mean nanoseconds.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != durationType || from == durationType {
		return data, nil
	}
	v := reflect.ValueOf(data)
	switch from.Kind() {
	case reflect.String:
		d, err := time.ParseDuration(strings.TrimSpace(v.String()))
		if err != nil {
			return nil, errDuration
		}
		return d, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() == 0 {
			return time.Duration(0), nil
		}
	case reflect.Float32, reflect.Float64:
		if v.Float() == 0 {
			return time.Duration(0), nil
		}
	default:
		return data, nil
	}
	return nil, errDuration
}

var errDuration = errors.New("must be a duration with a unit, such as 500ms, 30s or 2m")

// scalarHook parses strings into bools and numbers, so that values produced
// by ${VAR} interpolation or WATCHER_* overrides decode like literals. It is
// strict: "yes" is not a bool.
func scalarHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to == durationType {
		return data, nil
	}
	s := strings.TrimSpace(reflect.ValueOf(data).String())
	switch to.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, errors.New("must be true or false")
		}
		return b, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("must be a whole number")
		}
		return i, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, errors.New("must be a whole number")
		}
		return u, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("must be a number")
		}
		return f, nil
	}
	return data, nil
}
