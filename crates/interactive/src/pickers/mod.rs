//! Full-width pickers that take the editor's place: sessions, the session tree, models,
//! thinking levels and the project-trust prompt.
