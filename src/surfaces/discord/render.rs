//! What a Discord card looks like, as plain data (title, text, colour, fields,
//! buttons) so every card is tested without serenity, and the one place that turns it
//! into serenity's embed and component builders.

use serenity::builder::{
    CreateActionRow, CreateButton, CreateEmbed, CreateEmbedFooter, CreateSelectMenu,
    CreateSelectMenuKind, CreateSelectMenuOption,
};
use serenity::model::application::ButtonStyle;

/// Discord's limit on an embed description.
pub const DESCRIPTION_LIMIT: usize = 4096;
/// Discord's limit on a field value.
pub const FIELD_LIMIT: usize = 1024;

/// How a button looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Green.
    Success,
    /// Grey.
    Secondary,
    /// Red.
    Danger,
    /// Blurple.
    Primary,
}

/// One button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// Its custom id (≤ 100 characters).
    pub id: String,
    /// Its label.
    pub label: String,
    /// Its look.
    pub style: Style,
    /// Greyed out.
    pub disabled: bool,
}

/// One card, as data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Card {
    /// Title.
    pub title: String,
    /// Body text.
    pub description: String,
    /// Side colour.
    pub colour: u32,
    /// (name, value) fields.
    pub fields: Vec<(String, String)>,
    /// Small text at the bottom.
    pub footer: Option<String>,
    /// Buttons, five per row.
    pub buttons: Vec<Button>,
    /// A select menu under the buttons (the "Always…" choices with their time box).
    pub select: Option<Select>,
}

/// A string select menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Select {
    /// Its custom id.
    pub id: String,
    /// What it says before a choice.
    pub placeholder: String,
    /// (label, value) of each choice.
    pub options: Vec<(String, String)>,
    /// Greyed out.
    pub disabled: bool,
}

pub use crate::protocol::clip;

impl Card {
    /// The serenity embed.
    pub fn embed(&self) -> CreateEmbed {
        let mut e = CreateEmbed::new()
            .title(clip(&self.title, 256))
            .description(clip(&self.description, DESCRIPTION_LIMIT))
            .colour(self.colour);
        for (name, value) in self.fields.iter().take(25) {
            e = e.field(clip(name, 256), clip(value, FIELD_LIMIT), false);
        }
        if let Some(f) = &self.footer {
            e = e.footer(CreateEmbedFooter::new(clip(f, 2048)));
        }
        e
    }

    /// The serenity action rows (five buttons a row, then the select; at most five rows).
    pub fn components(&self) -> Vec<CreateActionRow> {
        let mut rows = self.button_rows();
        if let Some(s) = self.select.as_ref().filter(|s| !s.options.is_empty()) {
            let options = s
                .options
                .iter()
                .take(25)
                .map(|(label, value)| CreateSelectMenuOption::new(clip(label, 100), value.clone()))
                .collect();
            rows.truncate(4);
            rows.push(CreateActionRow::SelectMenu(
                CreateSelectMenu::new(s.id.clone(), CreateSelectMenuKind::String { options })
                    .placeholder(clip(&s.placeholder, 150))
                    .disabled(s.disabled),
            ));
        }
        rows
    }

    fn button_rows(&self) -> Vec<CreateActionRow> {
        self.buttons
            .chunks(5)
            .take(5)
            .map(|chunk| {
                CreateActionRow::Buttons(
                    chunk
                        .iter()
                        .map(|b| {
                            CreateButton::new(b.id.clone())
                                .label(clip(&b.label, 80))
                                .style(match b.style {
                                    Style::Success => ButtonStyle::Success,
                                    Style::Secondary => ButtonStyle::Secondary,
                                    Style::Danger => ButtonStyle::Danger,
                                    Style::Primary => ButtonStyle::Primary,
                                })
                                .disabled(b.disabled)
                        })
                        .collect(),
                )
            })
            .collect()
    }
}
