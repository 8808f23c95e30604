{{/* Names and labels shared by the templates. */}}

{{- define "locus.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "locus.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "locus.agentSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{- define "locus.schedulerSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end -}}

{{- define "locus.agentServiceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-agent" (include "locus.fullname" .)) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /*
locus.imageRef names one image from image.registry and image.repository, with
the per-image overrides in image.<which> (repository, tag, digest). A repository
whose first component names a host (it holds a dot or a colon, or is localhost,
as container runtimes read it) is taken whole, so --set
image.repository=registry.example.com/me/locus works as it reads. A digest pins
the image and replaces the tag. Called with (list $ "agent" "") or
(list $ "scheduler" "-scheduler"): the suffix names the image beside the agent's.
*/ -}}
{{- define "locus.imageRef" -}}
{{- $root := index . 0 -}}
{{- $which := index . 1 -}}
{{- $suffix := index . 2 -}}
{{- $img := $root.Values.image -}}
{{- $own := index $img $which | default dict -}}
{{- $repo := $own.repository | default (printf "%s%s" $img.repository $suffix) -}}
{{- $first := first (splitList "/" $repo) -}}
{{- if and $img.registry (not (or (contains "." $first) (contains ":" $first) (eq "localhost" $first))) -}}
{{- $repo = printf "%s/%s" (trimSuffix "/" $img.registry) $repo -}}
{{- end -}}
{{- with $own.digest -}}
{{- printf "%s@%s" $repo . -}}
{{- else -}}
{{- printf "%s:%s" $repo ($own.tag | default $img.tag | default $root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{- define "locus.image" -}}
{{- include "locus.imageRef" (list . "agent" "") -}}
{{- end -}}

{{- define "locus.schedulerImage" -}}
{{- include "locus.imageRef" (list . "scheduler" "-scheduler") -}}
{{- end -}}

{{- /* KUBERNETES_SERVICE_HOST/PORT, which client-go's in-cluster config reads, when
apiServer is set: they take precedence over the kubelet's. */ -}}
{{- define "locus.apiServerEnv" -}}
{{- with .Values.apiServer }}
{{- if or .host .port }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ required "apiServer.host is required when apiServer.port is set" .host | quote }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ required "apiServer.port is required when apiServer.host is set" .port | toString | quote }}
{{- end }}
{{- end }}
{{- end -}}
