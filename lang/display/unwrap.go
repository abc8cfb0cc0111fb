package display

import (
	"reflect"
	"unsafe"
)

// Unwrap returns the value inside yaegi's internal interface wrapper. When
// interpreted code passes a value of a cell-declared type through a variable
// of interface type to compiled code, the compiled side receives a
// github.com/traefik/yaegi/interp.valueInterface{node, value}; Unwrap
// extracts value. Other values are returned unchanged.
func Unwrap(v any) any {
	for i := 0; i < 4 && v != nil; i++ {
		t := reflect.TypeOf(v)
		if t.Kind() != reflect.Struct || t.Name() != "valueInterface" || t.PkgPath() != "github.com/traefik/yaegi/interp" || t.NumField() != 2 {
			return v
		}
		f, ok := t.FieldByName("value")
		if !ok || f.Type != reflect.TypeOf(reflect.Value{}) {
			return v
		}
		c := reflect.New(t).Elem()
		c.Set(reflect.ValueOf(v))
		inner := *(*reflect.Value)(unsafe.Pointer(c.Field(f.Index[0]).UnsafeAddr()))
		if !inner.IsValid() || !inner.CanInterface() {
			return nil
		}
		v = inner.Interface()
	}
	return v
}
