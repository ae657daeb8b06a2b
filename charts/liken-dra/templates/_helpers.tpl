{{- define "liken-dra.name" -}}liken-dra{{- end -}}
{{- define "liken-dra.labels" -}}
app.kubernetes.io/name: liken-dra
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
{{- define "liken-dra.selectorLabels" -}}
app.kubernetes.io/name: liken-dra
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "liken-dra.serviceAccount" -}}{{ .Values.serviceAccountName }}{{- end -}}
