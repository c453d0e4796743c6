// Command schemagen reads the Terraform schema of chosen resources and data sources out of the Gcore provider's
// Go source (G-Core/terraform-provider-gcore, the pinned version, from the Go module cache) and writes it as JSON.
//
// Why read the source rather than run the provider: the provider cannot be compiled here, because the Go module
// proxy refuses its API client modules (github.com/G-Core/gcorelabscloud-go, gcorelabscdn-go). Its schemas are
// plain composite literals of terraform-plugin-sdk/v2's schema.Schema, so go/parser and a small evaluator of
// constants recover them exactly: types, required/optional/computed, ForceNew, Sensitive, defaults, MaxItems,
// nesting, conflicts and timeouts. What is code (validators, diff suppressors, CustomizeDiff, set hashes) is not
// reproduced; each attribute lists the fields that were left out, so the fake provider and the docs can say so.
//
//	schemagen -src <module dir> -out schema.json -resource gcore_k8sv2 -data-source gcore_k8sv2_kubeconfig
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

type unresolved struct{ Source string }

type evaluator struct {
	fset   *token.FileSet
	consts map[string]ast.Expr // package-level const and var initialisers, by name
	funcs  map[string]*ast.FuncDecl
	src    map[string][]byte // file contents, for source text of unresolved expressions
	files  map[*ast.File]string
}

func (e *evaluator) text(n ast.Node) string {
	p := e.fset.Position(n.Pos())
	q := e.fset.Position(n.End())
	b := e.src[p.Filename]
	if b == nil || q.Offset > len(b) {
		return "?"
	}
	return string(b[p.Offset:q.Offset])
}

// eval returns a Go value (string, int64, float64, bool, nil, []any) or unresolved.
func (e *evaluator) eval(x ast.Expr) any {
	switch v := x.(type) {
	case *ast.BasicLit:
		switch v.Kind {
		case token.STRING:
			s, err := strconv.Unquote(v.Value)
			if err != nil {
				return unresolved{v.Value}
			}
			return s
		case token.INT:
			n, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil {
				return unresolved{v.Value}
			}
			return n
		case token.FLOAT:
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return unresolved{v.Value}
			}
			return f
		}
	case *ast.ParenExpr:
		return e.eval(v.X)
	case *ast.Ident:
		switch v.Name {
		case "true":
			return true
		case "false":
			return false
		case "nil":
			return nil
		}
		if init, ok := e.consts[v.Name]; ok {
			return e.eval(init)
		}
	case *ast.UnaryExpr:
		if v.Op == token.AND {
			return e.eval(v.X)
		}
		if v.Op == token.SUB {
			switch n := e.eval(v.X).(type) {
			case int64:
				return -n
			case float64:
				return -n
			}
		}
	case *ast.BinaryExpr:
		l, r := e.eval(v.X), e.eval(v.Y)
		switch a := l.(type) {
		case string:
			if b, ok := r.(string); ok && v.Op == token.ADD {
				return a + b
			}
		case int64:
			if b, ok := r.(int64); ok {
				switch v.Op {
				case token.ADD:
					return a + b
				case token.MUL:
					return a * b
				case token.SUB:
					return a - b
				}
			}
		}
	case *ast.SelectorExpr:
		if pkg, ok := v.X.(*ast.Ident); ok {
			switch pkg.Name + "." + v.Sel.Name {
			case "time.Nanosecond":
				return int64(time.Nanosecond)
			case "time.Millisecond":
				return int64(time.Millisecond)
			case "time.Second":
				return int64(time.Second)
			case "time.Minute":
				return int64(time.Minute)
			case "time.Hour":
				return int64(time.Hour)
			}
			if pkg.Name == "schema" && strings.HasPrefix(v.Sel.Name, "Type") {
				return v.Sel.Name
			}
		}
	case *ast.CallExpr:
		if sel, ok := v.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok {
				name := pkg.Name + "." + sel.Sel.Name
				switch name {
				case "time.Duration":
					if len(v.Args) == 1 {
						return e.eval(v.Args[0])
					}
				case "fmt.Sprintf":
					args := make([]any, 0, len(v.Args))
					for _, a := range v.Args {
						val := e.eval(a)
						if _, bad := val.(unresolved); bad {
							return unresolved{e.text(v)}
						}
						args = append(args, val)
					}
					if f, ok := args[0].(string); ok {
						return fmt.Sprintf(f, args[1:]...)
					}
				case "schema.EnvDefaultFunc":
					if len(v.Args) == 2 {
						env := e.eval(v.Args[0])
						def := e.eval(v.Args[1])
						if s, ok := env.(string); ok {
							if _, bad := def.(unresolved); !bad {
								return map[string]any{"env": s, "default": def}
							}
						}
					}
				}
			}
		}
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "int" && len(v.Args) == 1 {
			return e.eval(v.Args[0])
		}
	case *ast.CompositeLit:
		if _, ok := v.Type.(*ast.ArrayType); ok {
			out := make([]any, 0, len(v.Elts))
			for _, el := range v.Elts {
				val := e.eval(el)
				if _, bad := val.(unresolved); bad {
					return unresolved{e.text(v)}
				}
				out = append(out, val)
			}
			return out
		}
	}
	return unresolved{e.text(x)}
}

// Attribute fields that are data and are kept; every other field present in the source is listed as omitted.
var kept = map[string]string{
	"Type": "type", "Optional": "optional", "Required": "required", "Computed": "computed",
	"ForceNew": "force_new", "Sensitive": "sensitive", "Deprecated": "deprecated", "Description": "description",
	"Default": "default", "MaxItems": "max_items", "MinItems": "min_items", "ExactlyOneOf": "exactly_one_of",
	"ConflictsWith": "conflicts_with", "AtLeastOneOf": "at_least_one_of", "RequiredWith": "required_with",
	"DefaultFunc": "default_func", "ConfigMode": "config_mode",
}

func (e *evaluator) schemaMap(x ast.Expr) (map[string]any, error) {
	lit, ok := unaddr(x).(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("schema map is not a literal: %s", e.text(x))
	}
	out := map[string]any{}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("unexpected schema map element %s", e.text(el))
		}
		key, ok := e.eval(kv.Key).(string)
		if !ok {
			return nil, fmt.Errorf("schema key is not a constant string: %s", e.text(kv.Key))
		}
		attr, err := e.attribute(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out[key] = attr
	}
	return out, nil
}

func unaddr(x ast.Expr) ast.Expr {
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
		return u.X
	}
	return x
}

func (e *evaluator) attribute(x ast.Expr) (map[string]any, error) {
	lit, ok := unaddr(x).(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("attribute is not a literal: %s", e.text(x))
	}
	out := map[string]any{}
	var omitted []string
	for _, el := range lit.Elts {
		kv := el.(*ast.KeyValueExpr)
		field := kv.Key.(*ast.Ident).Name
		if field == "Elem" {
			elem, err := e.elem(kv.Value)
			if err != nil {
				return nil, err
			}
			out["elem"] = elem
			continue
		}
		name, ok := kept[field]
		if !ok {
			omitted = append(omitted, field)
			continue
		}
		val := e.eval(kv.Value)
		if u, bad := val.(unresolved); bad {
			out[name+"_unresolved"] = u.Source
			continue
		}
		out[name] = val
	}
	if len(omitted) > 0 {
		sort.Strings(omitted)
		out["omitted"] = omitted
	}
	return out, nil
}

func (e *evaluator) elem(x ast.Expr) (map[string]any, error) {
	lit, ok := unaddr(x).(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("Elem is not a literal: %s", e.text(x))
	}
	sel, _ := lit.Type.(*ast.SelectorExpr)
	if sel == nil {
		return nil, fmt.Errorf("Elem has no type: %s", e.text(x))
	}
	switch sel.Sel.Name {
	case "Schema":
		attr, err := e.attribute(lit)
		return map[string]any{"schema": attr}, err
	case "Resource":
		res, err := e.resource(lit)
		return map[string]any{"resource": res}, err
	}
	return nil, fmt.Errorf("unexpected Elem type %s", sel.Sel.Name)
}

func (e *evaluator) resource(lit *ast.CompositeLit) (map[string]any, error) {
	out := map[string]any{}
	var omitted []string
	for _, el := range lit.Elts {
		kv := el.(*ast.KeyValueExpr)
		field := kv.Key.(*ast.Ident).Name
		switch field {
		case "Schema":
			m, err := e.schemaMap(kv.Value)
			if err != nil {
				return nil, err
			}
			out["schema"] = m
		case "Description", "DeprecationMessage", "SchemaVersion":
			val := e.eval(kv.Value)
			if u, bad := val.(unresolved); bad {
				out[strings.ToLower(field)+"_unresolved"] = u.Source
			} else {
				out[strings.ToLower(field)] = val
			}
		case "Timeouts":
			t := map[string]any{}
			tl, ok := unaddr(kv.Value).(*ast.CompositeLit)
			if !ok {
				return nil, fmt.Errorf("Timeouts is not a literal")
			}
			for _, te := range tl.Elts {
				tkv := te.(*ast.KeyValueExpr)
				val := e.eval(tkv.Value)
				if n, ok := val.(int64); ok {
					t[strings.ToLower(tkv.Key.(*ast.Ident).Name)] = n / int64(time.Second)
				} else {
					return nil, fmt.Errorf("timeout %s unresolved", e.text(tkv.Value))
				}
			}
			out["timeouts_seconds"] = t
		case "Importer":
			out["importable"] = true
		default:
			omitted = append(omitted, field)
		}
	}
	if len(omitted) > 0 {
		sort.Strings(omitted)
		out["omitted"] = omitted
	}
	return out, nil
}

// resourceFunc finds `func name() *schema.Resource { return &schema.Resource{...} }` and reads its literal.
func (e *evaluator) resourceFunc(name string) (map[string]any, error) {
	fn, ok := e.funcs[name]
	if !ok {
		return nil, fmt.Errorf("function %s not found", name)
	}
	for _, st := range fn.Body.List {
		if ret, ok := st.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
			if lit, ok := unaddr(ret.Results[0]).(*ast.CompositeLit); ok {
				return e.resource(lit)
			}
		}
	}
	return nil, fmt.Errorf("function %s does not return a schema.Resource literal", name)
}

// registry reads Provider()'s ResourcesMap / DataSourcesMap: terraform type name -> constructor function.
func (e *evaluator) providerLiteral() (*ast.CompositeLit, error) {
	fn, ok := e.funcs["Provider"]
	if !ok {
		return nil, fmt.Errorf("func Provider not found")
	}
	var found *ast.CompositeLit
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok && found == nil {
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Provider" {
				found = lit
				return false
			}
		}
		return true
	})
	if found == nil {
		return nil, fmt.Errorf("no schema.Provider literal in Provider()")
	}
	return found, nil
}

func (e *evaluator) registry(p *ast.CompositeLit, field string) (map[string]string, error) {
	out := map[string]string{}
	for _, el := range p.Elts {
		kv := el.(*ast.KeyValueExpr)
		if kv.Key.(*ast.Ident).Name != field {
			continue
		}
		m := kv.Value.(*ast.CompositeLit)
		for _, me := range m.Elts {
			mkv := me.(*ast.KeyValueExpr)
			name, ok := e.eval(mkv.Key).(string)
			if !ok {
				continue
			}
			if call, ok := mkv.Value.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok {
					out[name] = id.Name
				}
			}
		}
	}
	return out, nil
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	src := flag.String("src", "", "directory of the terraform-provider-gcore module")
	out := flag.String("out", "", "output JSON file")
	version := flag.String("version", "", "the module's version, recorded in the output")
	var resources, dataSources listFlag
	flag.Var(&resources, "resource", "Terraform resource type to extract (repeatable)")
	flag.Var(&dataSources, "data-source", "Terraform data source type to extract (repeatable)")
	flag.Parse()
	if err := run(*src, *out, *version, resources, dataSources); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(src, out, version string, resources, dataSources []string) error {
	e := &evaluator{fset: token.NewFileSet(), consts: map[string]ast.Expr{}, funcs: map[string]*ast.FuncDecl{},
		src: map[string][]byte{}}
	pkgDir := filepath.Join(src, "gcore")
	entries, err := os.ReadDir(pkgDir)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".go") || strings.HasSuffix(ent.Name(), "_test.go") {
			continue
		}
		path := filepath.Join(pkgDir, ent.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		e.src[path] = b
		f, err := parser.ParseFile(e.fset, path, b, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			switch decl := d.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					e.funcs[decl.Name.Name] = decl
				}
			case *ast.GenDecl:
				if decl.Tok != token.CONST && decl.Tok != token.VAR {
					continue
				}
				for _, s := range decl.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							e.consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	plit, err := e.providerLiteral()
	if err != nil {
		return err
	}
	result := map[string]any{"source": "github.com/G-Core/terraform-provider-gcore", "version": version}
	for _, el := range plit.Elts {
		kv := el.(*ast.KeyValueExpr)
		if kv.Key.(*ast.Ident).Name == "Schema" {
			m, err := e.schemaMap(kv.Value)
			if err != nil {
				return fmt.Errorf("provider: %w", err)
			}
			result["provider"] = map[string]any{"schema": m}
		}
	}
	for _, kind := range []struct {
		field, key string
		want       []string
	}{{"ResourcesMap", "resources", resources}, {"DataSourcesMap", "data_sources", dataSources}} {
		reg, err := e.registry(plit, kind.field)
		if err != nil {
			return err
		}
		got := map[string]any{}
		for _, name := range kind.want {
			fn, ok := reg[name]
			if !ok {
				return fmt.Errorf("%s %q is not registered by Provider()", kind.key, name)
			}
			r, err := e.resourceFunc(fn)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r["constructor"] = fn
			got[name] = r
		}
		result[kind.key] = got
	}
	b, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
