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

{{- define "locus.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
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
