package main

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Events are stored once, as core/v1 Events, and served in two versions: as
// such under /api/v1 and as events.k8s.io/v1 Events (what kube-runtime's
// Recorder and client-go's new events library write). An event written in
// one shows in the other, as on a real cluster (kubectl get events reads
// core/v1).

type eventRules struct{ noRules }

// fields are the core/v1 Event field selectors upstream supports.
func (eventRules) fields(obj runtime.Object) fields.Set {
	e := obj.(*corev1.Event)
	o := e.InvolvedObject
	return fields.Set{
		"involvedObject.kind":            o.Kind,
		"involvedObject.namespace":       o.Namespace,
		"involvedObject.name":            o.Name,
		"involvedObject.uid":             string(o.UID),
		"involvedObject.apiVersion":      o.APIVersion,
		"involvedObject.resourceVersion": o.ResourceVersion,
		"involvedObject.fieldPath":       o.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}
}

// eventsV1FieldLabels maps events.k8s.io/v1 field selectors onto the
// stored core/v1 fields (upstream's mapping).
var eventsV1FieldLabels = map[string]string{
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"reason":                    "reason",
	"type":                      "type",
}

// registerEventConversions teaches the scheme both directions, for single
// events and lists.
func registerEventConversions(s *runtime.Scheme) {
	utilruntime.Must(s.AddConversionFunc((*eventsv1.Event)(nil), (*corev1.Event)(nil),
		func(in, out interface{}, _ conversion.Scope) error {
			eventsV1ToCore(in.(*eventsv1.Event), out.(*corev1.Event))
			return nil
		}))
	utilruntime.Must(s.AddConversionFunc((*corev1.Event)(nil), (*eventsv1.Event)(nil),
		func(in, out interface{}, _ conversion.Scope) error {
			coreToEventsV1(in.(*corev1.Event), out.(*eventsv1.Event))
			return nil
		}))
	utilruntime.Must(s.AddConversionFunc((*eventsv1.EventList)(nil), (*corev1.EventList)(nil),
		func(in, out interface{}, _ conversion.Scope) error {
			from, to := in.(*eventsv1.EventList), out.(*corev1.EventList)
			to.ListMeta, to.Items = from.ListMeta, make([]corev1.Event, len(from.Items))
			for i := range from.Items {
				eventsV1ToCore(&from.Items[i], &to.Items[i])
			}
			return nil
		}))
	utilruntime.Must(s.AddConversionFunc((*corev1.EventList)(nil), (*eventsv1.EventList)(nil),
		func(in, out interface{}, _ conversion.Scope) error {
			from, to := in.(*corev1.EventList), out.(*eventsv1.EventList)
			to.ListMeta, to.Items = from.ListMeta, make([]eventsv1.Event, len(from.Items))
			for i := range from.Items {
				coreToEventsV1(&from.Items[i], &to.Items[i])
			}
			return nil
		}))
}

func eventsV1ToCore(in *eventsv1.Event, out *corev1.Event) {
	*out = corev1.Event{
		ObjectMeta:          *in.ObjectMeta.DeepCopy(),
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Related != nil {
		out.Related = in.Related.DeepCopy()
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}

func coreToEventsV1(in *corev1.Event, out *eventsv1.Event) {
	*out = eventsv1.Event{
		ObjectMeta:               *in.ObjectMeta.DeepCopy(),
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Related != nil {
		out.Related = in.Related.DeepCopy()
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}
