package plugin

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// entryMeta answers every metav1.Object question about an nrtEntry but
// its name and version (which nrtEntry answers) with nothing, and takes no
// room: the informer needs an object whose metadata it can read (its key,
// its namespace index, an update's version), not metadata the plugin never
// reads. Setters are ignored.
type entryMeta struct{}

func (entryMeta) GetNamespace() string                          { return "" }
func (entryMeta) SetNamespace(string)                           {}
func (entryMeta) GetGenerateName() string                       { return "" }
func (entryMeta) SetGenerateName(string)                        {}
func (entryMeta) GetUID() types.UID                             { return "" }
func (entryMeta) SetUID(types.UID)                              {}
func (entryMeta) GetGeneration() int64                          { return 0 }
func (entryMeta) SetGeneration(int64)                           {}
func (entryMeta) GetSelfLink() string                           { return "" }
func (entryMeta) SetSelfLink(string)                            {}
func (entryMeta) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (entryMeta) SetCreationTimestamp(metav1.Time)              {}
func (entryMeta) GetDeletionTimestamp() *metav1.Time            { return nil }
func (entryMeta) SetDeletionTimestamp(*metav1.Time)             {}
func (entryMeta) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (entryMeta) SetDeletionGracePeriodSeconds(*int64)          {}
func (entryMeta) GetLabels() map[string]string                  { return nil }
func (entryMeta) SetLabels(map[string]string)                   {}
func (entryMeta) GetAnnotations() map[string]string             { return nil }
func (entryMeta) SetAnnotations(map[string]string)              {}
func (entryMeta) GetFinalizers() []string                       { return nil }
func (entryMeta) SetFinalizers([]string)                        {}
func (entryMeta) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (entryMeta) SetOwnerReferences([]metav1.OwnerReference)    {}
func (entryMeta) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (entryMeta) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

var _ metav1.Object = (*nrtEntry)(nil)
