// Command gen-deephash-schema writes kube/deephash-schema.c: the layout of the Go types that
// kcm's pod-template hash prints (k8s.io/api core/v1 PodTemplateSpec and everything it reaches),
// read by reflection from the k8s.io/api version pinned in this module's go.mod. kube/deephash.c
// walks these tables to print an object's JSON the way upstream's deep printer prints the decoded
// Go struct (docs/deployment.md, "The pod-template hash").
//
// Every struct field is listed in declaration order with its Go name, its JSON name (the tag's
// name; the Go name for fields without a json tag, which only the C side's synthesised values
// use), whether it is inlined in its parent's JSON object, and its type. Types whose JSON form is
// not their Go layout (resource.Quantity, metav1.Time, intstr.IntOrString) are marked special;
// the C printer builds their Go fields from the JSON text. Any other type with its own JSON
// decoding, a kind the printer does not know, or a layout the C side hard-codes that changed,
// stops the generator: the table is regenerated, not guessed.
//
//	cd tests/cluster && go run ./cmd/gen-deephash-schema > ../../kube/deephash-schema.c && make -C ../.. format
package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type field struct {
	goName, jsonName string
	inline           bool
	typ              int
}

type typ struct {
	t       reflect.Type
	kind    string
	special string
	elem    int
	key     int
	fields  []field
}

var (
	types []*typ
	index = map[reflect.Type]int{}
)

var specials = map[reflect.Type]string{
	reflect.TypeOf(resource.Quantity{}):  "DH_SP_QUANTITY",
	reflect.TypeOf(metav1.Time{}):        "DH_SP_TIME",
	reflect.TypeOf(intstr.IntOrString{}): "DH_SP_INTORSTRING",
	// managedFields' raw JSON is kept as bytes; a template carrying managedFields is refused.
	reflect.TypeOf(metav1.FieldsV1{}): "DH_SP_UNSUPPORTED",
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "gen-deephash-schema: "+format+"\n", a...)
	os.Exit(1)
}

// add returns t's index, adding t (and what it reaches) on first sight. inSpecial: t is inside
// a special type's Go layout (its JSON decoding is the special's, not its own).
func add(t reflect.Type, inSpecial bool) int {
	if i, ok := index[t]; ok {
		return i
	}
	sp := specials[t]
	if sp == "" && !inSpecial && t.Kind() != reflect.Ptr &&
		(reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		fail("%s has its own JSON decoding and no special printer", t)
	}
	e := &typ{t: t, special: sp, elem: -1, key: -1}
	i := len(types)
	types = append(types, e)
	index[t] = i
	inner := inSpecial || sp != ""
	switch t.Kind() {
	case reflect.Bool:
		e.kind = "DH_BOOL"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.kind = "DH_INT"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t.Kind() == reflect.Uint8 && !inner {
			fail("%s: byte values (base64 in JSON) are not supported", t)
		}
		e.kind = "DH_UINT"
	case reflect.String:
		e.kind = "DH_STRING"
	case reflect.Ptr:
		e.kind = "DH_PTR"
		if t.Elem().Kind() == reflect.Ptr {
			fail("%s: pointer to pointer", t)
		}
		if t.Elem().Size() == 0 {
			fail("%s: pointer to a zero-size type (spew's cycle check would see shared addresses)", t)
		}
		e.elem = add(t.Elem(), inner)
	case reflect.Slice:
		e.kind = "DH_SLICE"
		e.elem = add(t.Elem(), inner)
	case reflect.Map:
		e.kind = "DH_MAP"
		if t.Key().Kind() != reflect.String {
			fail("%s: map keys that are not strings", t)
		}
		e.key = add(t.Key(), inner)
		e.elem = add(t.Elem(), inner)
	case reflect.Struct:
		e.kind = "DH_STRUCT"
		for k := 0; k < t.NumField(); k++ {
			sf := t.Field(k)
			f := field{goName: sf.Name, jsonName: sf.Name}
			tag, hasTag := sf.Tag.Lookup("json")
			name := strings.Split(tag, ",")[0]
			if hasTag && !inner {
				if name == "-" {
					fail("%s.%s: json:\"-\" fields are not supported", t, sf.Name)
				}
				f.jsonName = name
				if name == "" {
					if !sf.Anonymous {
						fail("%s.%s: empty json name on a named field", t, sf.Name)
					}
					f.inline = true
				}
			} else if !inner {
				if !sf.Anonymous {
					fail("%s.%s: no json tag", t, sf.Name)
				}
				f.inline = true
			}
			if f.inline && sf.Type.Kind() != reflect.Struct {
				fail("%s.%s: inlined field that is not a struct", t, sf.Name)
			}
			f.typ = add(sf.Type, inner)
			e.fields = append(e.fields, f)
		}
	default:
		if inner && t.Kind() == reflect.Interface {
			// Only inside a special's layout (time.Location has none; kept for the check).
			fail("%s: interface inside a special type", t)
		}
		fail("%s: kind %s is not supported", t, t.Kind())
	}
	return i
}

// checkLayout fails if a special type's Go layout is not the one kube/deephash.c builds.
func checkLayout(t reflect.Type, want string) {
	var b strings.Builder
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		b.WriteString(t.String())
		if t.Kind() == reflect.Ptr && depth < 6 {
			b.WriteString("->")
			walk(t.Elem(), depth+1)
		}
		if t.Kind() == reflect.Slice && depth < 6 {
			b.WriteString("[")
			walk(t.Elem(), depth+1)
			b.WriteString("]")
		}
		if t.Kind() == reflect.Struct && depth < 6 {
			b.WriteString("{")
			for k := 0; k < t.NumField(); k++ {
				if k > 0 {
					b.WriteString(" ")
				}
				b.WriteString(t.Field(k).Name + ":")
				walk(t.Field(k).Type, depth+1)
			}
			b.WriteString("}")
		}
	}
	walk(t, 0)
	if b.String() != want {
		fail("layout of %s changed:\n got  %s\n want %s", t, b.String(), want)
	}
}

func cstr(s string) string {
	return fmt.Sprintf("%q", s) // Go and C agree on the escapes of these ASCII names
}

func main() {
	checkLayout(reflect.TypeOf(resource.Quantity{}),
		"resource.Quantity{i:resource.int64Amount{value:int64 scale:resource.Scale} "+
			"d:resource.infDecAmount{Dec:*inf.Dec->inf.Dec{unscaled:big.Int{neg:bool abs:big.nat[big.Word]} scale:inf.Scale}} "+
			"s:string Format:resource.Format}")
	checkLayout(reflect.TypeOf(intstr.IntOrString{}),
		"intstr.IntOrString{Type:intstr.Type IntVal:int32 StrVal:string}")
	// Only the zero time is printed (a set time's location would depend on kcm's TZ);
	// the layout up to the location pointer is what the C side writes.
	checkLayout(reflect.TypeOf(metav1.Time{}),
		"v1.Time{Time:time.Time{wall:uint64 ext:int64 loc:*time.Location->time.Location{name:string "+
			"zone:[]time.zone[time.zone{name:string offset:int isDST:bool}] tx:[]time.zoneTrans[time.zoneTrans{when:int64 index:uint8 isstd:bool isutc:bool}] "+
			"extend:string cacheStart:int64 cacheEnd:int64 cacheZone:*time.zone->time.zone{name:string offset:int isDST:bool}}}}")

	roots := []struct {
		name string
		t    reflect.Type
	}{
		{"DH_ROOT_POD_TEMPLATE_SPEC", reflect.TypeOf(v1.PodTemplateSpec{})},
	}
	for _, r := range roots {
		add(r.t, false)
	}

	fmt.Println("/* SPDX-License-Identifier: Apache-2.0 */")
	fmt.Println("/* kube/deephash-schema.c: GENERATED by tests/cluster/cmd/gen-deephash-schema from the Go")
	fmt.Println(" * types of k8s.io/api " + apiVersion() + " (reflection). Do not edit: regenerate (docs/deployment.md).")
	fmt.Println(" * The layout of each Go type kcm's pod-template hash prints (kube/deephash.h). */")
	fmt.Println("#include \"kube/deephash-schema.h\"")
	fmt.Println()
	nf := 0
	for _, e := range types {
		nf += len(e.fields)
	}
	fmt.Printf("const struct dh_field dh_fields[%d] = {\n", nf)
	first := make([]int, len(types))
	nf = 0
	for i, e := range types {
		first[i] = nf
		for _, f := range e.fields {
			inl := "0"
			if f.inline {
				inl = "1"
			}
			fmt.Printf("\t{%s, %s, %d, %s}, /* %d: %s */\n", cstr(f.goName), cstr(f.jsonName), f.typ, inl, nf, e.t)
			nf++
		}
	}
	fmt.Println("};")
	fmt.Println()
	fmt.Printf("const struct dh_type dh_types[%d] = {\n", len(types))
	for i, e := range types {
		sp := e.special
		if sp == "" {
			sp = "DH_SP_NONE"
		}
		fmt.Printf("\t{%s, %s, %s, %d, %d, %d, %d}, /* %d */\n", cstr(e.t.String()), e.kind, sp, e.elem, e.key, first[i], len(e.fields), i)
	}
	fmt.Println("};")
	fmt.Println()
	fmt.Printf("const unsigned dh_n_types = %d;\n", len(types))
	fmt.Printf("const unsigned dh_n_fields = %d;\n", nf)
	for _, r := range roots {
		fmt.Printf("const int %s = %d;\n", strings.ToLower(r.name), index[r.t])
	}
}

func apiVersion() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		fail("read go.mod: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "replace" && f[1] == "k8s.io/api" {
			return f[4]
		}
	}
	fail("k8s.io/api not in go.mod's replace lines")
	return ""
}
