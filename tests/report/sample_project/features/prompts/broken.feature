@broken_feature
Feature: Prompts behind a broken setup
  Scenario: Never runs because the feature hook fails
    Given the "shop" server is running
