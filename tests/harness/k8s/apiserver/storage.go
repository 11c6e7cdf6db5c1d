package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// newRESTOptionsGetter gives the built-ins the storage settings of the
// custom resources (same etcd, prefix, watch cache), with a codec for the
// typed objects: JSON of the served versions.
func newRESTOptionsGetter(etcd genericoptions.EtcdOptions, cfg *genericapiserver.RecommendedConfig) generic.RESTOptionsGetter {
	versions := servedGroupVersions()
	etcd.StorageConfig.Codec = codecs.LegacyCodec(versions...)
	etcd.StorageConfig.EncodeVersioner = schema.GroupVersions(versions)
	etcd.StorageConfig.StorageObjectCountTracker = cfg.StorageObjectCountTracker
	etcd.WatchCacheSizes = nil
	return etcd.CreateRESTOptionsGetter(&genericoptions.SimpleStorageFactory{StorageConfig: etcd.StorageConfig},
		cfg.ResourceTransformers)
}

// newStore makes the generic etcd registry of one built-in.
func newStore(b *builtin, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, error) {
	s := newStrategy(b)
	store := &genericregistry.Store{
		NewFunc:                   b.newObject,
		NewListFunc:               b.newList,
		DefaultQualifiedResource:  b.resource(),
		SingularQualifiedResource: b.gv.WithResource(b.singular).GroupResource(),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            rest.NewDefaultTableConvertor(b.resource()),
	}
	// The labels and fields that selectors (and the watch cache) match.
	attributes := func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m := objectMeta(obj)
		set := generic.ObjectMetaFieldsSet(m, b.namespaced)
		if extra := b.rules.fields(obj); extra != nil {
			set = generic.MergeFieldsSets(set, extra)
		}
		return labels.Set(m.Labels), set, nil
	}
	err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: attributes})
	return store, err
}

// endpoint is a resource's main REST endpoint: the store, plus what
// discovery tells about the resource.
type endpoint struct {
	*genericregistry.Store
	b *builtin
}

var (
	_ rest.ShortNamesProvider       = &endpoint{}
	_ rest.CategoriesProvider       = &endpoint{}
	_ rest.GroupVersionKindProvider = &endpoint{}
	_ rest.Patcher                  = &statusEndpoint{}
	_ rest.ResetFieldsStrategy      = &statusEndpoint{}
)

func (e *endpoint) ShortNames() []string { return e.b.shortNames }
func (e *endpoint) Categories() []string { return e.b.categories }

// GroupVersionKind: the served kind, also where the store holds another
// group's type (events.k8s.io/v1 Event).
func (e *endpoint) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind { return e.b.gvk() }

// statusEndpoint serves <plural>/status from a copy of the store whose
// update strategy is the status strategy.
type statusEndpoint struct {
	store *genericregistry.Store
}

func newStatusEndpoint(main *genericregistry.Store, b *builtin) *statusEndpoint {
	store := *main
	s := statusStrategy{newStrategy(b)}
	store.UpdateStrategy, store.ResetFieldsStrategy = s, s
	return &statusEndpoint{store: &store}
}

func (e *statusEndpoint) New() runtime.Object { return e.store.New() }

// Destroy: the main endpoint's store owns the storage.
func (e *statusEndpoint) Destroy() {}

func (e *statusEndpoint) Get(ctx context.Context, name string, options *v1.GetOptions) (runtime.Object, error) {
	return e.store.Get(ctx, name, options)
}

// Update never creates: a subresource has no object of its own.
func (e *statusEndpoint) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	_ bool, options *v1.UpdateOptions) (runtime.Object, bool, error) {
	return e.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

func (e *statusEndpoint) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return e.store.GetResetFields()
}

func (e *statusEndpoint) ConvertToTable(ctx context.Context, obj runtime.Object, options runtime.Object) (*v1.Table, error) {
	return e.store.ConvertToTable(ctx, obj, options)
}

// installBuiltins builds the storage of every built-in and installs the
// groups: core/v1 under /api, the others under /apis. The generic server
// adds them to discovery (legacy and aggregated) and to /openapi.
func installBuiltins(server *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter) error {
	stores := map[string]*genericregistry.Store{}
	groups := map[string]*genericapiserver.APIGroupInfo{}
	var order []string
	for _, b := range builtins {
		store, ok := stores[b.storageKey()]
		if !ok {
			if b.storedAs != "" {
				return fmt.Errorf("%s is stored as %s, which must come first in the table", b.key(), b.storedAs)
			}
			var err error
			if store, err = newStore(b, optsGetter); err != nil {
				return fmt.Errorf("storage of %s: %w", b.key(), err)
			}
			stores[b.key()] = store
		}

		info := groups[b.gv.Group]
		if info == nil {
			g := genericapiserver.NewDefaultAPIGroupInfo(b.gv.Group, scheme, parameterCodec, codecs)
			g.PrioritizedVersions = []schema.GroupVersion{b.gv}
			info = &g
			groups[b.gv.Group] = info
			order = append(order, b.gv.Group)
		}
		paths := info.VersionedResourcesStorageMap[b.gv.Version]
		if paths == nil {
			paths = map[string]rest.Storage{}
			info.VersionedResourcesStorageMap[b.gv.Version] = paths
		}
		paths[b.plural] = &endpoint{Store: store, b: b}
		if b.statusSubresource {
			paths[b.plural+"/status"] = newStatusEndpoint(store, b)
		}
	}

	if err := server.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, groups[""]); err != nil {
		return fmt.Errorf("core/v1: %w", err)
	}
	var named []*genericapiserver.APIGroupInfo
	for _, g := range order {
		if g != "" {
			named = append(named, groups[g])
		}
	}
	return server.InstallAPIGroups(named...)
}
