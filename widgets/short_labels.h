// Short labels for a chart's kernels: the part of each name that tells it
// from the others.
#pragma once

#include <QString>
#include <QStringList>

namespace tessera::widgets {

/// How many leading characters all `labels` share, cut back to just after a
/// '_' or '/' (0 when one label would keep nothing): fused kernels' names
/// start alike (fused__bert_encoder_layer_2_intermediate_..., ..._layer_9_
/// output_...) and differ after that.
int sharedLabelStart(const QStringList& labels);

/// `label` past its first `shared` characters (shown as a leading ellipsis),
/// cut to `max_chars` (a trailing ellipsis); tooltips have it whole.
QString shortLabel(const QString& label, int shared, int max_chars);

}  // namespace tessera::widgets
