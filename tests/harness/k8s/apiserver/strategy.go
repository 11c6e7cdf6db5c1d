package main

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The semantics every built-in shares, as upstream's strategies have them:
//
//   - metadata.generation is 1 on create and grows by one with each change
//     of .spec (kinds without a spec keep 0);
//   - with a status subresource, the main endpoint never writes .status (a
//     create starts from the kind's initial status) and <plural>/status
//     writes nothing but .status; server-side apply is told so through the
//     reset fields, so neither endpoint's manager owns the other's fields;
//   - metadata.name has the kind's format; the rest of metadata (namespace,
//     labels, annotations, ownerReferences, finalizers) is validated by the
//     generic registry.

// objectField returns the top-level struct field name ("Spec", "Status") of
// a typed object, or an invalid Value when the type has none.
func objectField(obj runtime.Object, name string) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName(name)
}

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	b *builtin
}

func newStrategy(b *builtin) strategy {
	return strategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, b: b}
}

func (s strategy) NamespaceScoped() bool          { return s.b.namespaced }
func (s strategy) AllowCreateOnUpdate() bool      { return s.b.createOnUpdate }
func (s strategy) AllowUnconditionalUpdate() bool { return true }
func (s strategy) Canonicalize(runtime.Object)    {}

func (s strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (s strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (s strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if status := objectField(obj, "Status"); s.b.statusSubresource && status.IsValid() {
		status.Set(reflect.Zero(status.Type()))
	}
	m, _ := meta.Accessor(obj)
	if objectField(obj, "Spec").IsValid() {
		m.SetGeneration(1)
	} else {
		m.SetGeneration(0)
	}
	s.b.rules.prepareForCreate(obj)
}

func (s strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.b.statusSubresource {
		objectField(obj, "Status").Set(objectField(old, "Status"))
	}
	m, _ := meta.Accessor(obj)
	previous, _ := meta.Accessor(old)
	generation := previous.GetGeneration()
	if spec := objectField(obj, "Spec"); spec.IsValid() &&
		!equality.Semantic.DeepEqual(spec.Interface(), objectField(old, "Spec").Interface()) {
		generation++
	}
	m.SetGeneration(generation)
	s.b.rules.prepareForUpdate(obj, old)
}

func (s strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	m, _ := meta.Accessor(obj)
	if n := m.GetName(); n != "" {
		for _, msg := range s.b.rules.name(n, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), n, msg))
		}
	}
	return append(errs, s.b.rules.validate(obj)...)
}

func (s strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return append(s.Validate(ctx, obj), s.b.rules.validateUpdate(obj, old)...)
}

// GetResetFields: on the main endpoint of a kind with /status, .status is
// not the writer's.
func (s strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.b.statusSubresource {
		return nil
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.b.gv.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// statusStrategy is the update strategy of <plural>/status.
type statusStrategy struct{ strategy }

// PrepareForUpdate keeps the stored object but for .status. The request's
// resourceVersion (its precondition) and managedFields (server-side apply's
// bookkeeping of this very request) stay the request's.
func (s statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	m, _ := meta.Accessor(obj)
	resourceVersion, managed := m.GetResourceVersion(), m.GetManagedFields()
	status := objectField(obj, "Status").Interface()

	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(old.DeepCopyObject()).Elem())
	objectField(obj, "Status").Set(reflect.ValueOf(status))
	m, _ = meta.Accessor(obj)
	m.SetResourceVersion(resourceVersion)
	m.SetManagedFields(managed)
}

// ValidateUpdate of /status: all but .status is the stored, valid object;
// status content is not validated (as for custom resources without rules).
func (s statusStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// GetResetFields: /status owns nothing but .status, as for custom resources.
func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.b.gv.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("metadata"),
			fieldpath.MakePathOrDie("spec"),
		),
	}
}

// objectMeta returns the embedded ObjectMeta of a typed built-in object.
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	return objectField(obj, "ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
}
