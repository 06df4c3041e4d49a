// StepDialog: one form for every primitive (see step_dialog.h).
#include "app/studio/step_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>
#include <map>

namespace tessera::studio {
namespace {

// What each primitive reads from the fields.
const std::map<QString, QString>& help() {
    static const std::map<QString, QString> h = {
        {"split", "loops: the loop; integers: factors (one may be -1)"},
        {"fuse", "loops: adjacent nested loops, outermost first"},
        {"reorder", "loops: loops of one nest in their new order"},
        {"tile", "loops: x, y; integers: x factor, y factor"},
        {"parallel", "loops: the loop"},
        {"vectorize", "loops: the loop"},
        {"unroll", "loops: the loop"},
        {"bind", "loops: the loop; key: blockIdx.x|y|z, threadIdx.x|y|z or vthread.x|y|z"},
        {"compute_at", "block: the producer; loops: the consumer's loop to compute it under"},
        {"reverse_compute_at",
         "block: the consumer; loops: the producer's loop to compute it under"},
        {"compute_inline", "block: an elementwise producer inlined into its readers"},
        {"reverse_compute_inline", "block: an elementwise consumer inlined into its producer"},
        {"cache_read",
         "block; integers: which read buffer (0 = first); key: scope (global, shared, local)"},
        {"cache_write",
         "block; integers: which written buffer; key: scope (global, shared, local)"},
        {"rfactor", "loops: a reduction loop; integers: the factor axis"},
        {"decompose_reduction", "block: the reduction; loops: the loop its init goes above"},
        {"annotate", "loops: a loop (or block: a block); key: the pragma; value: its value"},
        {"pack_operand",
         "block: the matmul; key: the rank-2 parameter; integers: tiled dim, panel width, "
         "parallel (0/1), vector lanes"},
        {"transform_layout",
         "key: a buffer the kernel allocates (a matmul's local accumulator); integers: its "
         "dimensions in their new order (1, 0 swaps them)"},
    };
    return h;
}

std::vector<std::string> names(const QString& text) {
    std::vector<std::string> out;
    for (const QString& part : QString(text).replace(',', ' ').split(' ', Qt::SkipEmptyParts))
        out.push_back(part.toStdString());
    return out;
}

}  // namespace

QStringList StepDialog::primitives() {
    return {"split",           "fuse",
            "reorder",         "tile",
            "parallel",        "vectorize",
            "unroll",          "bind",
            "compute_at",      "reverse_compute_at",
            "compute_inline",  "reverse_compute_inline",
            "cache_read",      "cache_write",
            "rfactor",         "decompose_reduction",
            "annotate",        "pack_operand",
            "transform_layout"};
}

StepDialog::StepDialog(const QString& block, const QStringList& loops, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle("Add schedule step");
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_op = new QComboBox(this);
    m_op->addItems(primitives());
    m_help = new QLabel(this);
    m_help->setWordWrap(true);
    // Room for the longest hint: a wrapped label in a form row does not grow
    // when its text changes (cache_read's hint was cut at top and bottom).
    m_help->setMinimumWidth(fontMetrics().averageCharWidth() * 48);
    m_help->setMinimumHeight(fontMetrics().lineSpacing() * 4);
    m_help->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_block = new QLineEdit(block, this);
    m_loops = new QLineEdit(loops.join(", "), this);
    m_ints = new QLineEdit(this);
    m_ints->setPlaceholderText("e.g. -1, 8");
    m_key = new QLineEdit(this);
    m_value = new QLineEdit(this);
    form->addRow("Primitive", m_op);
    form->addRow("", m_help);
    form->addRow("Block", m_block);
    form->addRow("Loops", m_loops);
    form->addRow("Integers", m_ints);
    form->addRow("Key", m_key);
    form->addRow("Value", m_value);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_op, &QComboBox::currentTextChanged, this, &StepDialog::describe);
    describe();
}

void StepDialog::describe() {
    auto it = help().find(m_op->currentText());
    m_help->setText(it == help().end() ? QString() : it->second);
}

void StepDialog::setPrimitive(const QString& op) { m_op->setCurrentText(op); }

void StepDialog::setField(const QString& field, const QString& text) {
    QLineEdit* e = field == "block"   ? m_block
                   : field == "loops" ? m_loops
                   : field == "ints"  ? m_ints
                   : field == "key"   ? m_key
                                      : m_value;
    e->setText(text);
}

bool StepDialog::step(schedule::Step* out, QString* why) const {
    schedule::Step s;
    s.op = m_op->currentText().toStdString();
    s.block = m_block->text().trimmed().toStdString();
    s.loops = names(m_loops->text());
    for (const QString& part :
         QString(m_ints->text()).replace(',', ' ').split(' ', Qt::SkipEmptyParts)) {
        bool ok = false;
        s.ints.push_back(part.toLongLong(&ok));
        if (!ok) {
            if (why) *why = "'" + part + "' is not an integer";
            return false;
        }
    }
    s.key = m_key->text().trimmed().toStdString();
    s.value = m_value->text().toStdString();
    // Primitives that take no block argument: the selection's block is not theirs.
    static const QStringList loopOnly = {
        "split",     "fuse",   "reorder", "tile",    "parallel",
        "vectorize", "unroll", "bind",    "rfactor", "transform_layout"};
    if (loopOnly.contains(m_op->currentText())) s.block.clear();
    if (s.op == "annotate" && !s.loops.empty()) s.block.clear();
    *out = s;
    return true;
}

}  // namespace tessera::studio
